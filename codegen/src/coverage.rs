//! The coverage matrix: for every function x type row x phase x input mode
//! x DISTINCT, whether a specialization exists and which entry declares it.

use std::fmt;

use crate::model::{Entry, Function, InputMode, Location, Phase, SpecSet};

/// Both input modes, in listing order.
pub const INPUT_MODES: [InputMode; 2] = InputMode::ALL;

/// Whether one combination is specialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The entry at this location provides it.
    Specialized(Location),
    /// No entry declares the function over this type for this input mode
    /// and DISTINCT flag.
    NoEntry,
    /// The entry at this location declares the function over the type but
    /// does not list the phase.
    PhaseNotListed(Location),
}

impl Status {
    /// Whether a specialization exists.
    pub fn is_specialized(&self) -> bool {
        matches!(self, Status::Specialized(_))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Specialized(at) => write!(f, "specialized by {at}"),
            Status::NoEntry => write!(f, "not specialized: no entry"),
            Status::PhaseNotListed(at) => write!(f, "not specialized: phase not listed in {at}"),
        }
    }
}

/// One row of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageRow {
    /// The function.
    pub function: Function,
    /// The type row name; `None` for COUNT(*) (shown as `*`).
    pub ty: Option<String>,
    /// The phase.
    pub phase: Phase,
    /// The input mode.
    pub input: InputMode,
    /// The DISTINCT variant.
    pub distinct: bool,
    /// Whether it is specialized, and by which entry or why not.
    pub status: Status,
}

impl CoverageRow {
    /// The type column: the row name, or `*` for COUNT(*).
    pub fn type_name(&self) -> &str {
        self.ty.as_deref().unwrap_or("*")
    }
}

/// Selects rows of the matrix; `None` fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this function.
    pub function: Option<Function>,
    /// Only this type row name (`*` for COUNT(*)).
    pub ty: Option<String>,
    /// Only this phase.
    pub phase: Option<Phase>,
    /// Only this input mode.
    pub input: Option<InputMode>,
}

impl Filter {
    /// Whether `row` passes the filter.
    pub fn matches(&self, row: &CoverageRow) -> bool {
        self.function.is_none_or(|f| f == row.function)
            && self.ty.as_deref().is_none_or(|t| t == row.type_name())
            && self.phase.is_none_or(|p| p == row.phase)
            && self.input.is_none_or(|i| i == row.input)
    }
}

/// The whole matrix, in function, type row, phase, input mode, DISTINCT
/// order. COUNT(*) has the single type `*`; other functions range over
/// every type row.
pub fn coverage(specs: &SpecSet) -> Vec<CoverageRow> {
    let mut rows = Vec::new();
    for function in Function::ALL {
        let types: Vec<Option<&str>> = if function.arity() == 0 {
            vec![None]
        } else {
            specs.types.iter().map(|t| Some(t.name.as_str())).collect()
        };
        for ty in types {
            for phase in Phase::ALL {
                for input in INPUT_MODES {
                    for distinct in [false, true] {
                        let declaring = specs
                            .entries
                            .iter()
                            .find(|e| declares(e, function, ty, input, distinct));
                        let status = match declaring {
                            None => Status::NoEntry,
                            Some(entry) if entry.phases.contains(&phase) => {
                                Status::Specialized(entry.location.clone())
                            }
                            Some(entry) => Status::PhaseNotListed(entry.location.clone()),
                        };
                        rows.push(CoverageRow {
                            function,
                            ty: ty.map(str::to_string),
                            phase,
                            input,
                            distinct,
                            status,
                        });
                    }
                }
            }
        }
    }
    rows
}

fn declares(
    entry: &Entry,
    function: Function,
    ty: Option<&str>,
    input: InputMode,
    distinct: bool,
) -> bool {
    entry.input == input
        && entry.distinct == distinct
        && entry.functions.contains(&function)
        && match ty {
            None => entry.types.is_empty(),
            Some(name) => entry.types.iter().any(|t| t == name),
        }
}

/// Renders rows as a table with aligned columns and a header line.
pub fn render_table(rows: &[CoverageRow]) -> String {
    let header = [
        "FUNCTION", "TYPE", "PHASE", "INPUT", "DISTINCT", "STATUS", "ENTRY",
    ];
    let mut cells: Vec<[String; 7]> = vec![header.map(str::to_string)];
    for row in rows {
        let (status, entry) = match &row.status {
            Status::Specialized(at) => ("specialized".to_string(), at.to_string()),
            Status::NoEntry => ("not specialized".to_string(), "no entry".to_string()),
            Status::PhaseNotListed(at) => (
                "not specialized".to_string(),
                format!("phase not listed in {at}"),
            ),
        };
        cells.push([
            row.function.as_str().to_string(),
            row.type_name().to_string(),
            row.phase.as_str().to_string(),
            row.input.as_str().to_string(),
            if row.distinct { "yes" } else { "no" }.to_string(),
            status,
            entry,
        ]);
    }
    let mut widths = [0usize; 7];
    for line in &cells {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    for line in &cells {
        let mut text = String::new();
        for (i, cell) in line.iter().enumerate() {
            if i + 1 == line.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}
