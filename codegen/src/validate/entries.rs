//! Rules for `[[entry]]` tables of family files.
//!
//! Each state template serves one kind of function and input mode
//! (non-DISTINCT only: no DISTINCT template exists yet), takes certain type
//! rows and params, and has a fixed partial layout.

use crate::error::SpecError;
use crate::load::{locate, Located, RawEntry, RawItem, Source};
use crate::model::{
    Division, Entry, Function, InputMode, Location, Numeric, Overflow, Params, PartialField, Phase,
    StateTemplate, TypeExpr, TypeRow,
};

use super::suggest::unknown_name;
use super::type_expr::{parse_type_expr, type_expr_text};
use super::types::{numeric_text, TypeTable};

/// What makes two specializations the same: function, type row (`None`
/// for COUNT(*)), input mode and DISTINCT.
pub(crate) type SpecKey = (Function, Option<String>, InputMode, bool);

/// An entry after its checks: the model entry if it had no errors, and the
/// keys it declares with the location of each (for duplicate detection,
/// computed even when other fields are wrong).
pub(crate) struct CheckedEntry {
    pub entry: Option<Entry>,
    pub keys: Vec<(SpecKey, Location)>,
}

/// The template a function's state needs for an input mode: Flink keeps
/// the same function for both modes except SUM (SumWithRetractAggFunction
/// also counts values).
fn template_for(function: Function, input: Option<InputMode>) -> StateTemplate {
    match function {
        Function::Min | Function::Max if input == Some(InputMode::Retracting) => {
            StateTemplate::CountedExtreme
        }
        Function::Min | Function::Max => StateTemplate::RunningExtreme,
        Function::CountStar => StateTemplate::CountStar,
        Function::Count => StateTemplate::Count,
        Function::Sum if input == Some(InputMode::Retracting) => StateTemplate::SumRetract,
        Function::Sum => StateTemplate::Sum,
        Function::Sum0 => StateTemplate::Sum0,
        Function::Avg => StateTemplate::Avg,
    }
}

/// Why a template cannot take retracting input, or `None` when it can.
fn retracting_refusal(template: StateTemplate) -> Option<&'static str> {
    match template {
        StateTemplate::RunningExtreme => Some(
            "retracting MIN/MAX keeps a counted multiset of values per group \
             (Flink's MinWithRetractAggFunction): use state = \"counted_extreme\"",
        ),
        StateTemplate::Sum => Some(
            "retracting SUM keeps a count of values too, so a retraction can bring the sum back to \
             NULL: use state = \"sum_retract\"",
        ),
        _ => None,
    }
}

/// The partial layout a template keeps: (field count, description).
fn layout_text(template: StateTemplate) -> &'static str {
    match template {
        StateTemplate::RunningExtreme => "one field of type `arg`",
        StateTemplate::CountStar | StateTemplate::Count => "one BIGINT field",
        StateTemplate::Sum | StateTemplate::Sum0 => "one field (the sum)",
        StateTemplate::Avg | StateTemplate::SumRetract => "two fields, the sum and a BIGINT count",
        StateTemplate::CountedExtreme => "no partial layout (single phase only)",
    }
}

const INPUT_MODES: [&str; 2] = ["insert_only", "retracting"];

/// Per-entry checker state.
struct Check<'a> {
    source: &'a Source,
    table: &'a TypeTable,
    errors: &'a mut Vec<SpecError>,
}

impl Check<'_> {
    fn error(&mut self, at: &Location, message: impl Into<String>) {
        self.errors.push(SpecError::new(at.clone(), message));
    }
}

/// Checks one entry.
pub(crate) fn check_entry(
    item: &RawItem<RawEntry>,
    table: &TypeTable,
    errors: &mut Vec<SpecError>,
) -> CheckedEntry {
    let before = errors.len();
    let raw = &item.raw;
    let mut cx = Check {
        source: &item.source,
        table,
        errors,
    };
    let source = cx.source;

    // functions
    let functions_at = source.location(&raw.functions.span());
    let mut functions: Vec<Located<Function>> = Vec::new();
    if raw.functions.get_ref().is_empty() {
        cx.error(
            &functions_at,
            "`functions` is empty; name at least one function, e.g. [\"MIN\"]",
        );
    }
    for text in raw.functions.get_ref() {
        let text = locate(source, text);
        match Function::parse(&text.value) {
            Some(f) if functions.iter().any(|g| g.value == f) => cx.error(
                &text.at,
                format!("function {} is listed twice; remove one", f.as_str()),
            ),
            Some(f) => functions.push(Located {
                value: f,
                at: text.at,
            }),
            None => cx.error(
                &text.at,
                unknown_name(
                    "function",
                    &text.value,
                    Function::ALL.iter().map(|f| f.as_str()),
                ),
            ),
        }
    }

    // input, distinct, state
    let input_text = locate(source, &raw.input);
    let input = InputMode::parse(&input_text.value);
    if input.is_none() {
        cx.error(
            &input_text.at,
            unknown_name("input mode", &input_text.value, INPUT_MODES),
        );
    }
    let (distinct, distinct_at) = match &raw.distinct {
        Some(d) => (*d.get_ref(), source.location(&d.span())),
        None => (false, item.at.clone()),
    };
    let state_text = locate(source, &raw.state);
    let state = StateTemplate::parse(&state_text.value);
    if state.is_none() {
        cx.error(
            &state_text.at,
            unknown_name(
                "state template",
                &state_text.value,
                StateTemplate::ALL.iter().map(|t| t.as_str()),
            ),
        );
    }

    // phases
    let phases_at = source.location(&raw.phases.span());
    let mut phases: Vec<Located<Phase>> = Vec::new();
    if raw.phases.get_ref().is_empty() {
        cx.error(
            &phases_at,
            "`phases` is empty; list at least one of single, local, global",
        );
    }
    for text in raw.phases.get_ref() {
        let text = locate(source, text);
        match Phase::parse(&text.value) {
            Some(p) if phases.iter().any(|q| q.value == p) => cx.error(
                &text.at,
                format!("phase {} is listed twice; remove one", p.as_str()),
            ),
            Some(p) => phases.push(Located {
                value: p,
                at: text.at,
            }),
            None => cx.error(
                &text.at,
                unknown_name("phase", &text.value, Phase::ALL.iter().map(|p| p.as_str())),
            ),
        }
    }

    // types
    let types_at = source.location(&raw.types.span());
    let mut type_names: Vec<Located<String>> = Vec::new();
    for text in raw.types.get_ref() {
        let text = locate(source, text);
        if type_names.iter().any(|t| t.value == text.value) {
            cx.error(
                &text.at,
                format!("type {} is listed twice; remove one", text.value),
            );
        } else if !table.declares(&text.value) {
            cx.error(
                &text.at,
                unknown_name(
                    "type row",
                    &text.value,
                    table.names.iter().map(String::as_str),
                ),
            );
        } else {
            type_names.push(text);
        }
    }
    // Valid rows with the location of their name in `types`.
    let rows: Vec<(&TypeRow, &Location)> = type_names
        .iter()
        .filter_map(|t| table.row(&t.value).map(|row| (row, &t.at)))
        .collect();

    // Keys for duplicate detection.
    let mut keys = Vec::new();
    if let Some(input) = input {
        for f in &functions {
            if f.value.arity() == 0 {
                keys.push(((f.value, None, input, distinct), f.at.clone()));
            } else {
                for t in &type_names {
                    keys.push((
                        (f.value, Some(t.value.clone()), input, distinct),
                        t.at.clone(),
                    ));
                }
            }
        }
    }

    // Arity.
    if functions.iter().any(|f| f.value.arity() == 0) && !raw.types.get_ref().is_empty() {
        cx.error(
            &types_at,
            "COUNT_STAR takes no argument, so `types` must be `[]`; remove the type names",
        );
    }
    if let Some(f) = functions.iter().find(|f| f.value.arity() > 0) {
        if raw.types.get_ref().is_empty() {
            cx.error(
                &types_at,
                format!(
                    "{} takes an argument, so `types` must list at least one type row",
                    f.value.as_str()
                ),
            );
        }
    }

    let mut params = Params::default();
    if let Some(state) = state {
        // Function <-> template.
        for f in &functions {
            let wanted = template_for(f.value, input);
            // An insert-only template over retracting input is reported once,
            // at the `input` line (with the template to use).
            let retracting_only = input == Some(InputMode::Retracting)
                && template_for(f.value, Some(InputMode::InsertOnly)) == state
                && retracting_refusal(state).is_some();
            if wanted != state && !retracting_only {
                cx.error(
                    &f.at,
                    format!(
                        "function {} cannot use state template `{}`; {} needs state = \"{}\" \
                         (put it in its own entry if the others need another template)",
                        f.value.as_str(),
                        state.as_str(),
                        f.value.as_str(),
                        wanted.as_str()
                    ),
                );
            }
        }
        // Input mode and DISTINCT.
        if let (Some(InputMode::Retracting), Some(refusal)) = (input, retracting_refusal(state)) {
            cx.error(
                &input_text.at,
                format!(
                    "state template `{}` only accepts insert-only input; {refusal}: \
                     write input = \"insert_only\" or add that template",
                    state.as_str(),
                ),
            );
        }
        if distinct {
            cx.error(
                &distinct_at,
                format!(
                    "state template `{}` cannot deduplicate values; DISTINCT needs a template that keeps \
                     the set of distinct values per group (with counts, Flink's distinct MapView), which \
                     does not exist yet: write distinct = false or add that template",
                    state.as_str()
                ),
            );
        }
        // Types the template takes.
        if matches!(
            state,
            StateTemplate::Sum
                | StateTemplate::Sum0
                | StateTemplate::Avg
                | StateTemplate::SumRetract
        ) {
            for (row, at) in &rows {
                if row.numeric == Numeric::None {
                    cx.error(
                        at,
                        format!(
                            "type {} has numeric = \"none\"; state template `{}` needs an integer, float or \
                             decimal type row: remove it from `types`",
                            row.name,
                            state.as_str()
                        ),
                    );
                }
            }
        }
        params = check_params(&mut cx, item, state, &rows);
    }

    // Partial layout and phases.
    let mut partial: Vec<Located<PartialField>> = Vec::new();
    let partial_at = match &raw.partial {
        Some(p) => source.location(&p.span()),
        None => item.at.clone(),
    };
    if let Some(fields) = &raw.partial {
        for field in fields.get_ref() {
            let field_at = source.location(&field.span());
            let field = field.get_ref();
            let name = locate(source, &field.name);
            if !is_field_name(&name.value) {
                cx.error(
                    &name.at,
                    format!(
                        "partial field name `{}` must be a lower-case identifier (letters, digits, `_`), \
                         as Flink names accumulator fields",
                        name.value
                    ),
                );
            } else if partial.iter().any(|p| p.value.name == name.value) {
                cx.error(
                    &name.at,
                    format!("partial field `{}` is listed twice; rename one", name.value),
                );
            }
            let ty = locate(source, &field.ty);
            if let Some(ty) = check_type_expr(&mut cx, &ty, &functions, &rows) {
                partial.push(Located {
                    value: PartialField {
                        name: name.value,
                        ty,
                    },
                    at: field_at,
                });
            }
        }
    }
    let written = raw.partial.as_ref().map_or(0, |p| p.get_ref().len());
    if state == Some(StateTemplate::CountedExtreme) {
        for phase in &phases {
            if phase.value != Phase::Single {
                cx.error(
                    &phase.at,
                    format!(
                        "state template `counted_extreme` runs in the single phase only (Flink's \
                         two-phase accumulator holds a MapView, which has no Arrow partial layout \
                         here); remove phase {}",
                        phase.value.as_str()
                    ),
                );
            }
        }
    }
    if written == 0 && state != Some(StateTemplate::CountedExtreme) {
        for phase in &phases {
            if phase.value != Phase::Single {
                cx.error(
                    &phase.at,
                    format!(
                        "phase {} exchanges the partial layout, but `partial` is empty; \
                         add the layout or remove the phase",
                        phase.value.as_str()
                    ),
                );
            }
        }
    } else if let Some(state) = state {
        check_layout(&mut cx, state, &partial, written, &partial_at);
    }

    // Result.
    let result_text = locate(source, &raw.result);
    let result = check_type_expr(&mut cx, &result_text, &functions, &rows);
    if let (Some(state), Some(result)) = (state, &result) {
        let wanted = match state {
            StateTemplate::RunningExtreme | StateTemplate::CountedExtreme => Some(TypeExpr::Arg),
            StateTemplate::CountStar | StateTemplate::Count => {
                Some(TypeExpr::Named("BIGINT".into()))
            }
            _ => None,
        };
        if let Some(wanted) = wanted {
            if *result != wanted {
                cx.error(
                    &result_text.at,
                    format!(
                        "state template `{}` returns `{}`, not `{}`; write result = \"{}\"",
                        state.as_str(),
                        type_expr_text(&wanted),
                        type_expr_text(result),
                        type_expr_text(&wanted)
                    ),
                );
            }
        }
    }

    let failed = cx.errors.len() > before;
    let entry = match (failed, input, state, result) {
        (false, Some(input), Some(state), Some(result)) => Some(Entry {
            functions: functions.iter().map(|f| f.value).collect(),
            input,
            distinct,
            state,
            phases: phases.iter().map(|p| p.value).collect(),
            types: type_names.iter().map(|t| t.value.clone()).collect(),
            partial: partial.into_iter().map(|p| p.value).collect(),
            result,
            params,
            location: item.at.clone(),
        }),
        _ => None,
    };
    CheckedEntry { entry, keys }
}

fn is_field_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Checks the partial layout against the template's state shape.
fn check_layout(
    cx: &mut Check<'_>,
    state: StateTemplate,
    fields: &[Located<PartialField>],
    written: usize,
    partial_at: &Location,
) {
    let count = match state {
        StateTemplate::Avg | StateTemplate::SumRetract => 2,
        StateTemplate::CountedExtreme => 0,
        _ => 1,
    };
    if written != count {
        cx.error(
            partial_at,
            format!(
                "state template `{}` keeps {}, but `partial` lists {written}; write exactly that layout",
                state.as_str(),
                layout_text(state)
            ),
        );
        return;
    }
    if fields.len() != written {
        return; // a field type was already reported
    }
    let bigint = TypeExpr::Named("BIGINT".into());
    let wanted: Vec<Option<TypeExpr>> = match state {
        StateTemplate::RunningExtreme => vec![Some(TypeExpr::Arg)],
        StateTemplate::CountedExtreme => Vec::new(),
        StateTemplate::CountStar | StateTemplate::Count => vec![Some(bigint)],
        StateTemplate::Sum | StateTemplate::Sum0 => vec![None],
        StateTemplate::Avg | StateTemplate::SumRetract => vec![None, Some(bigint)],
    };
    for (field, wanted) in fields.iter().zip(wanted) {
        if let Some(wanted) = wanted {
            if field.value.ty != wanted {
                cx.error(
                    &field.at,
                    format!(
                        "partial field `{}` has type `{}`, but state template `{}` keeps {}; write type = \"{}\"",
                        field.value.name,
                        type_expr_text(&field.value.ty),
                        state.as_str(),
                        layout_text(state),
                        type_expr_text(&wanted)
                    ),
                );
            }
        }
    }
}

/// Parses a type expression and checks it against the entry's arguments.
fn check_type_expr(
    cx: &mut Check<'_>,
    text: &Located<String>,
    functions: &[Located<Function>],
    rows: &[(&TypeRow, &Location)],
) -> Option<TypeExpr> {
    let expr = match parse_type_expr(&text.value) {
        Ok(expr) => expr,
        Err(message) => {
            cx.error(&text.at, message);
            return None;
        }
    };
    let no_argument = !functions.is_empty() && functions.iter().all(|f| f.value.arity() == 0);
    match &expr {
        TypeExpr::Named(name) if !cx.table.declares(name) => {
            cx.error(
                &text.at,
                unknown_name("type row", name, cx.table.names.iter().map(String::as_str)),
            );
            return None;
        }
        TypeExpr::Named(_) => {}
        TypeExpr::Arg if no_argument => {
            cx.error(
                &text.at,
                "COUNT_STAR has no argument, so `arg` means nothing here; name a type row such as `BIGINT`",
            );
            return None;
        }
        TypeExpr::Arg => {}
        TypeExpr::Decimal { .. } => {
            if no_argument {
                cx.error(
                    &text.at,
                    format!(
                        "`{}` is for DECIMAL arguments, and COUNT_STAR has none; name a type row such as `BIGINT`",
                        text.value
                    ),
                );
                return None;
            }
            let others: Vec<&str> = rows
                .iter()
                .filter(|(row, _)| row.numeric != Numeric::Decimal)
                .map(|(row, _)| row.name.as_str())
                .collect();
            if !others.is_empty() {
                cx.error(
                    &text.at,
                    format!(
                        "`{}` is only for DECIMAL arguments, but this entry also lists {}; move those types \
                         to an entry using `arg` or a type row name",
                        text.value,
                        others.join(", ")
                    ),
                );
                return None;
            }
        }
    }
    Some(expr)
}

/// Checks `params` for the template.
fn check_params(
    cx: &mut Check<'_>,
    item: &RawItem<RawEntry>,
    state: StateTemplate,
    rows: &[(&TypeRow, &Location)],
) -> Params {
    let source = cx.source;
    let (overflow, division) = match &item.raw.params {
        Some(p) => (
            p.get_ref().overflow.as_ref().map(|o| locate(source, o)),
            p.get_ref().division.as_ref().map(|d| locate(source, d)),
        ),
        None => (None, None),
    };
    let params_at = item
        .raw
        .params
        .as_ref()
        .map(|p| source.location(&p.span()))
        .unwrap_or_else(|| item.at.clone());
    let mut params = Params::default();
    let wants_overflow = matches!(
        state,
        StateTemplate::Sum | StateTemplate::Sum0 | StateTemplate::SumRetract
    );
    let wants_division = state == StateTemplate::Avg;

    // overflow
    match (&overflow, wants_overflow) {
        (Some(text), true) => match parse_overflow(&text.value) {
            Some(value) => {
                let misfits = misfits(rows, value, overflow_for, overflow_text);
                if !misfits.is_empty() {
                    cx.error(
                        &text.at,
                        format!(
                            "overflow = \"{}\" does not fit {misfits} (wrap is for integer, ieee for float, \
                             null for decimal); split the entry by numeric class",
                            text.value
                        ),
                    );
                }
                params.overflow = Some(value);
            }
            None => cx.error(&text.at, unknown_name("overflow", &text.value, ["wrap", "ieee", "null"])),
        },
        (None, true) => cx.error(
            &params_at,
            format!(
                "state template `{}` needs params.overflow (wrap for integer types, ieee for float, null for \
                 decimal); add params = {{ overflow = \"...\" }}",
                state.as_str()
            ),
        ),
        (Some(text), false) => cx.error(
            &text.at,
            format!(
                "`overflow` is a parameter of the sum and sum0 templates, not `{}`; remove it",
                state.as_str()
            ),
        ),
        (None, false) => {}
    }

    // division
    match (&division, wants_division) {
        (Some(text), true) => match parse_division(&text.value) {
            Some(value) => {
                let misfits = misfits(rows, value, division_for, division_text);
                if !misfits.is_empty() {
                    cx.error(
                        &text.at,
                        format!(
                            "division = \"{}\" does not fit {misfits} (truncate is for integer, float for \
                             float, half_up for decimal); split the entry by numeric class",
                            text.value
                        ),
                    );
                }
                params.division = Some(value);
            }
            None => cx.error(
                &text.at,
                unknown_name("division", &text.value, ["truncate", "float", "half_up"]),
            ),
        },
        (None, true) => cx.error(
            &params_at,
            "state template `avg` needs params.division (truncate for integer types, float for float, \
             half_up for decimal); add params = { division = \"...\" }",
        ),
        (Some(text), false) => cx.error(
            &text.at,
            format!(
                "`division` is a parameter of the avg template, not `{}`; remove it",
                state.as_str()
            ),
        ),
        (None, false) => {}
    }
    params
}

/// `type FLOAT (float, needs "ieee"), type DOUBLE (...)` for the rows whose
/// numeric class needs another parameter value than `value`; empty if all fit.
fn misfits<T: PartialEq + Copy>(
    rows: &[(&TypeRow, &Location)],
    value: T,
    needed: fn(Numeric) -> Option<T>,
    text: fn(T) -> &'static str,
) -> String {
    rows.iter()
        .filter_map(|(row, _)| {
            let needed = needed(row.numeric)?;
            (needed != value).then(|| {
                format!(
                    "type {} ({}, needs \"{}\")",
                    row.name,
                    numeric_text(row.numeric),
                    text(needed)
                )
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_overflow(text: &str) -> Option<Overflow> {
    match text {
        "wrap" => Some(Overflow::Wrap),
        "ieee" => Some(Overflow::Ieee),
        "null" => Some(Overflow::Null),
        _ => None,
    }
}

fn overflow_text(overflow: Overflow) -> &'static str {
    match overflow {
        Overflow::Wrap => "wrap",
        Overflow::Ieee => "ieee",
        Overflow::Null => "null",
    }
}

fn overflow_for(numeric: Numeric) -> Option<Overflow> {
    match numeric {
        Numeric::Integer => Some(Overflow::Wrap),
        Numeric::Float => Some(Overflow::Ieee),
        Numeric::Decimal => Some(Overflow::Null),
        Numeric::None => None,
    }
}

fn parse_division(text: &str) -> Option<Division> {
    match text {
        "truncate" => Some(Division::Truncate),
        "float" => Some(Division::Float),
        "half_up" => Some(Division::HalfUp),
        _ => None,
    }
}

fn division_text(division: Division) -> &'static str {
    match division {
        Division::Truncate => "truncate",
        Division::Float => "float",
        Division::HalfUp => "half_up",
    }
}

fn division_for(numeric: Numeric) -> Option<Division> {
    match numeric {
        Numeric::Integer => Some(Division::Truncate),
        Numeric::Float => Some(Division::Float),
        Numeric::Decimal => Some(Division::HalfUp),
        Numeric::None => None,
    }
}
