//! Logical SQL types, phases, input modes and row kinds shared by the
//! registry, the operators and the plan descriptor.

use std::str::FromStr;

use crate::error::AggError;

pub use crate::sql_type::{Family, Layout, ParamKind, SqlType, TypeRowInfo};

/// Which half of Flink's aggregation plan an operator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// One stateful operator that reads raw rows and emits the changelog.
    Single,
    /// Stateless per bundle: reads raw rows, emits partial accumulators.
    Local,
    /// Stateful: merges partials and emits the changelog.
    Global,
}

impl Phase {
    /// Every phase, in spec order.
    pub const ALL: [Phase; 3] = [Phase::Single, Phase::Local, Phase::Global];

    /// The spec spelling: `single`, `local`, `global`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Phase::Single => "single",
            Phase::Local => "local",
            Phase::Global => "global",
        }
    }
}

impl FromStr for Phase {
    type Err = AggError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "single" => Ok(Phase::Single),
            "local" => Ok(Phase::Local),
            "global" => Ok(Phase::Global),
            _ => Err(AggError::Plan(format!(
                "unknown phase '{text}' (expected single, local or global)"
            ))),
        }
    }
}

/// Whether an aggregate's input may contain retractions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputMode {
    /// Only +I rows reach the aggregate.
    InsertOnly,
    /// -U and -D rows may reach the aggregate.
    Retracting,
}

impl InputMode {
    /// The spec spelling: `insert_only` or `retracting`.
    pub fn as_str(&self) -> &'static str {
        match self {
            InputMode::InsertOnly => "insert_only",
            InputMode::Retracting => "retracting",
        }
    }
}

impl FromStr for InputMode {
    type Err = AggError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "insert_only" => Ok(InputMode::InsertOnly),
            "retracting" => Ok(InputMode::Retracting),
            _ => Err(AggError::Plan(format!(
                "unknown input mode '{text}' (expected insert_only or retracting)"
            ))),
        }
    }
}

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
