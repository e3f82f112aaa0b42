//! Which specializations exist, and the one a plan's aggregate call gets.
//!
//! The table itself ([`all`]) and the type rows SQL types match
//! ([`SqlType::type_row`]) are generated from the specs (see [`crate::generated`]); this module answers
//! lookups against them with a reason when nothing fits.

use std::fmt;

use crate::accumulator::GroupAccumulator;
use crate::error::Result;
use crate::generated;
use crate::types::{InputMode, Phase, SqlType};

/// One generated specialization, as the registry lists it.
#[derive(Clone, Copy)]
pub struct Admission {
    /// Specialization name, e.g. `MIN<INT>/insert_only`.
    pub name: &'static str,
    /// Function spelling, e.g. `MIN`, `COUNT_STAR`.
    pub function: &'static str,
    /// Most arguments a call may pass: the typed one, then optional
    /// character-string arguments (LISTAGG's separator).
    pub max_args: usize,
    /// Type row of the argument (`None` for COUNT(*)).
    pub type_row: Option<&'static str>,
    /// Input mode the specialization accepts.
    pub input: InputMode,
    /// DISTINCT variant.
    pub distinct: bool,
    /// Phases it is generated for.
    pub phases: &'static [Phase],
    /// Where the spec entry is written, `specs/file.toml:line`.
    pub spec: &'static str,
    /// Builds the accumulator for an argument type.
    pub constructor: fn(Option<&SqlType>) -> Result<Box<dyn GroupAccumulator>>,
}

impl Admission {
    /// Creates the accumulator; the actual SQL type fixes DECIMAL precision
    /// and scale and TIMESTAMP precision, hence the Arrow types.
    pub fn create(&self, arg: Option<&SqlType>) -> Result<Box<dyn GroupAccumulator>> {
        (self.constructor)(arg)
    }

    /// Creates the accumulator of a call with arguments of `arg_types` in
    /// `phase` ([`GroupAccumulator::configure_call`] applied).
    pub fn create_call(
        &self,
        arg_types: &[SqlType],
        phase: Phase,
    ) -> Result<Box<dyn GroupAccumulator>> {
        let mut accumulator = self.create(arg_types.first())?;
        accumulator.configure_call(phase, arg_types.len());
        Ok(accumulator)
    }
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admission")
            .field("name", &self.name)
            .field("phases", &self.phases)
            .field("spec", &self.spec)
            .finish()
    }
}

/// Why a call has no specialization: a sentence for EXPLAIN and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAdmitted {
    /// The reason.
    pub reason: String,
}

impl fmt::Display for NotAdmitted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for NotAdmitted {}

fn no(reason: String) -> NotAdmitted {
    NotAdmitted { reason }
}

/// Every specialization the specs declare.
pub fn all() -> &'static [Admission] {
    generated::ADMISSIONS
}

/// The name of the `types.toml` row a SQL type falls in.
pub fn type_row_of(ty: &SqlType) -> Option<&'static str> {
    ty.type_row().map(|row| row.name)
}

/// The specialization for `function(arg)` in `phase` with `input` and
/// `distinct`, or why there is none. `function` is the spec spelling
/// (case-insensitive); `COUNT` without an argument means `COUNT_STAR`.
pub fn lookup(
    function: &str,
    arg: Option<&SqlType>,
    phase: Phase,
    input: InputMode,
    distinct: bool,
) -> Result<&'static Admission, NotAdmitted> {
    let upper = function.to_ascii_uppercase();
    let function = match (upper.as_str(), arg) {
        ("COUNT", None) => "COUNT_STAR",
        ("$SUM0", _) => "SUM0",
        (name, _) => name,
    };
    let by_function: Vec<&'static Admission> =
        all().iter().filter(|a| a.function == function).collect();
    if by_function.is_empty() {
        return Err(no(format!("no spec entry for function {function}")));
    }
    let row = match arg {
        Some(ty) => Some(type_row_of(ty).ok_or_else(|| {
            no(format!(
                "no type row in types.toml matches {ty} (for {function})"
            ))
        })?),
        None => None,
    };
    let shown = match (row, arg) {
        (Some(_), Some(ty)) => ty.to_string(),
        _ => "*".to_string(),
    };
    let by_type: Vec<&'static Admission> = by_function
        .into_iter()
        .filter(|a| a.type_row == row)
        .collect();
    if by_type.is_empty() {
        return Err(no(match row {
            Some(row) if row != shown => {
                format!("no spec entry for {function} over {shown} (type row {row})")
            }
            _ => format!("no spec entry for {function} over {shown}"),
        }));
    }
    let label = format!("{function}<{}>", row.unwrap_or("*"));
    let by_input: Vec<&'static Admission> =
        by_type.into_iter().filter(|a| a.input == input).collect();
    if by_input.is_empty() {
        let mode = match input {
            InputMode::InsertOnly => "insert-only",
            InputMode::Retracting => "retracting",
        };
        return Err(no(format!("{label} has no {mode} specialization")));
    }
    let Some(admission) = by_input.into_iter().find(|a| a.distinct == distinct) else {
        let what = if distinct { "DISTINCT" } else { "non-DISTINCT" };
        return Err(no(format!(
            "{label}/{} has no {what} specialization",
            input.as_str()
        )));
    };
    if !admission.phases.contains(&phase) {
        return Err(no(format!(
            "phase {} not listed for {} ({})",
            phase.as_str(),
            admission.name,
            admission.spec
        )));
    }
    Ok(admission)
}
