//! Logical SQL types, phases, input modes and row kinds shared by the
//! registry, the operators and the plan descriptor.

pub use crate::sql_type::{Family, Layout, ParamKind, SqlType, TypeRowInfo};

/// Phases and input modes, shared with the spec compiler.
pub use aggforge_common::{InputMode, Phase};

/// Flink's RowKind, as encoded in the Int8 `$row_kind` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum RowKind {
    /// +I
    Insert = 0,
    /// -U
    UpdateBefore = 1,
    /// +U
    UpdateAfter = 2,
    /// -D
    Delete = 3,
}

impl RowKind {
    /// Decodes the Int8 encoding.
    pub fn from_i8(code: i8) -> Option<RowKind> {
        match code {
            0 => Some(RowKind::Insert),
            1 => Some(RowKind::UpdateBefore),
            2 => Some(RowKind::UpdateAfter),
            3 => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// True for +I and +U, which Flink accumulates.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }

    /// Flink's short form: `+I`, `-U`, `+U`, `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }
}

/// The name of the optional row-kind column in input and output batches.
pub const ROW_KIND_COLUMN: &str = "$row_kind";

/// Whether a plan's fixed-width calls run in one JIT-compiled loop
/// (`table.exec.aggforge.jit`): `auto` where it is measured to win, `on`
/// wherever a lowering exists, `off` never. Without the `jit` feature, or
/// when compiling fails, the static kernels run whatever the mode.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum JitMode {
    /// The JIT where it wins.
    #[default]
    Auto,
    /// The JIT wherever a plan has a call it can fuse.
    On,
    /// The static kernels only.
    Off,
}

impl JitMode {
    /// The option value: `auto`, `on` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            JitMode::Auto => "auto",
            JitMode::On => "on",
            JitMode::Off => "off",
        }
    }

    /// Whether this is the default, `auto`.
    pub fn is_auto(&self) -> bool {
        *self == JitMode::Auto
    }
}
