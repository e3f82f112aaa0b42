//! Rules for state template declarations (read by [`crate::templates`]):
//! known names, functions, input modes and phases; numeric classes; per
//! class a partial layout (when a two-phase phase is supported) and a
//! result type, both well-formed type expressions; parameter values; no
//! two templates serving the same function, input mode and DISTINCT.
//!
//! Type row names used in type expressions are checked against
//! `types.toml` where an entry uses the template (see `entries`), so a
//! type table without, say, DOUBLE still loads when no entry needs it.

use crate::error::SpecError;
use crate::load::Located;
use crate::model::{
    Declaration, Division, Function, InputMode, Location, Numeric, Overflow, Params, PartialField,
    Phase, Shape, StateTemplate, TypeExpr,
};
use crate::templates::{PerClass, RawDecl, RawField, Templates};

use super::suggest::unknown_name;
use super::type_expr::parse_type_expr;
use super::types::numeric_text;

/// Numeric class spellings of declarations (as `numeric` in types.toml).
pub(crate) const CLASSES: [(&str, Numeric); 4] = [
    ("integer", Numeric::Integer),
    ("float", Numeric::Float),
    ("decimal", Numeric::Decimal),
    ("none", Numeric::None),
];

/// A validated declaration with where each type row name it uses is
/// written (per class), for the check against `types.toml`.
#[derive(Debug, Clone)]
pub(crate) struct CheckedDecl {
    pub decl: Declaration,
    pub named: Vec<(Option<Numeric>, String, Location)>,
}

/// The class list `a, b or c`.
pub(crate) fn classes_text(classes: &[Numeric]) -> String {
    let names: Vec<&str> = classes.iter().map(|c| numeric_text(*c)).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Checks every declaration; `complete` is false when some had errors
/// (entries then skip the checks that need the missing template).
pub(crate) fn check_declarations(
    templates: &Templates,
    errors: &mut Vec<SpecError>,
) -> (Vec<CheckedDecl>, bool) {
    let before = errors.len();
    errors.extend(templates.errors.iter().cloned());
    let mut out: Vec<CheckedDecl> = Vec::new();
    for raw in &templates.items {
        if let Some(checked) = check_decl(raw, errors) {
            let taken = checked.decl.functions.iter().find_map(|&f| {
                checked.decl.inputs.iter().find_map(|&input| {
                    out.iter()
                        .find(|o| o.decl.serves(f, input, checked.decl.distinct))
                        .map(|o| (f, input, o))
                })
            });
            if let Some((f, input, other)) = taken {
                errors.push(SpecError::new(
                    raw.functions_at.clone(),
                    format!(
                        "{} over {} input is already served by state template `{}` ({}); \
                         one template per function and input mode: remove it from one of the two",
                        f.as_str(),
                        input.as_str(),
                        other.decl.template.as_str(),
                        other.decl.location
                    ),
                ));
            } else if out.iter().any(|o| o.decl.template == checked.decl.template) {
                errors.push(SpecError::new(
                    raw.at.clone(),
                    format!(
                        "state template `{}` is declared twice; keep one declaration",
                        checked.decl.template.as_str()
                    ),
                ));
            } else {
                out.push(checked);
            }
        }
    }
    (out, errors.len() == before)
}

fn check_decl(raw: &RawDecl, errors: &mut Vec<SpecError>) -> Option<CheckedDecl> {
    let before = errors.len();
    let mut error =
        |at: &Location, message: String| errors.push(SpecError::new(at.clone(), message));
    let template = StateTemplate::parse(&raw.name);
    if template.is_none() {
        error(
            &raw.at,
            format!(
                "{}; the file name names the template, and the emitter knows only these: rename the \
                 file or teach the emitter the template",
                unknown_name(
                    "state template",
                    &raw.name,
                    StateTemplate::ALL.iter().map(|t| t.as_str())
                )
            ),
        );
    }
    let functions = parse_list(
        &raw.functions,
        &raw.functions_at,
        "function",
        &mut error,
        Function::parse,
        Function::ALL.iter().map(|f| f.as_str()).collect(),
    );
    let inputs = parse_list(
        &raw.input,
        &raw.input_at,
        "input mode",
        &mut error,
        InputMode::parse,
        vec!["insert_only", "retracting"],
    );
    let phases = parse_list(
        &raw.phases,
        &raw.phases_at,
        "phase",
        &mut error,
        Phase::parse,
        Phase::ALL.iter().map(|p| p.as_str()).collect(),
    );
    if functions.is_empty() {
        // Nothing to shape without the functions (their errors say why).
        return None;
    }
    let no_argument = functions.iter().all(|f| f.arity() == 0);
    if !no_argument && functions.iter().any(|f| f.arity() == 0) {
        error(
            &raw.functions_at,
            "a template serves either COUNT_STAR (no argument) or functions with an argument, not both; \
             split the declaration"
                .into(),
        );
    }
    let numeric: Vec<Numeric> = match &raw.numeric {
        None => CLASSES.iter().map(|(_, c)| *c).collect(),
        Some(list) => parse_list(
            list,
            &raw.at,
            "numeric class",
            &mut error,
            parse_class,
            CLASSES.iter().map(|(s, _)| *s).collect(),
        ),
    };
    // The classes shapes are keyed by: none for COUNT(*).
    let keys: Vec<Option<Numeric>> = if no_argument {
        vec![None]
    } else {
        numeric.iter().copied().map(Some).collect()
    };
    let distributed = phases.iter().find(|p| **p != Phase::Single);

    let mut shapes = Vec::new();
    let mut named = Vec::new();
    let mut accumulator_reported = false;
    for &key in &keys {
        let partial = pick(&raw.partial, key, &keys, "partial", &mut error);
        let result = pick(&raw.result, key, &keys, "result", &mut error);
        let overflow = pick(&raw.overflow, key, &keys, "params.overflow", &mut error);
        let division = pick(&raw.division, key, &keys, "params.division", &mut error);
        let mut fields: Vec<PartialField> = Vec::new();
        for RawField { name, ty } in partial.into_iter().flatten() {
            if !is_field_name(&name.value) {
                error(
                    &name.at,
                    format!(
                        "partial field name `{}` must be an identifier starting lower-case \
                         (letters, digits, `_`), as Flink names accumulator fields",
                        name.value
                    ),
                );
            } else if fields.iter().any(|f| f.name == name.value) {
                error(
                    &name.at,
                    format!("partial field `{}` is listed twice; rename one", name.value),
                );
            }
            if let Some(ty) = type_expr(ty, key, &mut error, &mut named) {
                fields.push(PartialField {
                    name: name.value.clone(),
                    ty,
                });
            }
        }
        let given = !matches!(raw.partial, PerClass::Absent);
        if let (Some(phase), true) = (distributed, fields.is_empty() && given) {
            error(
                &raw.phases_at,
                format!(
                    "phase {} exchanges the partial layout, but `partial` gives none{}; add the layout \
                     or remove the phase",
                    phase.as_str(),
                    class_suffix(key)
                ),
            );
        }
        if fields.len() > 1
            && fields.iter().any(|f| f.ty == TypeExpr::Accumulator)
            && !accumulator_reported
        {
            accumulator_reported = true;
            error(
                &raw.phases_at,
                "an `accumulator` partial field is Flink's whole accumulator: it must be the \
                 only partial field"
                    .into(),
            );
        }
        let result = match result {
            Some(text) if text.value.trim() == "accumulator" => {
                error(
                    &text.at,
                    "`accumulator` is only a partial field type; a result is a column type such \
                     as `arg` or `BIGINT`"
                        .into(),
                );
                None
            }
            Some(text) => type_expr(text, key, &mut error, &mut named),
            None => {
                error(
                    &raw.at,
                    format!(
                        "the declaration gives no `result`{}; add it",
                        class_suffix(key)
                    ),
                );
                None
            }
        };
        let params = Params {
            overflow: overflow.and_then(|text| {
                parse_value(
                    text,
                    "overflow",
                    &mut error,
                    &[
                        ("wrap", Overflow::Wrap),
                        ("ieee", Overflow::Ieee),
                        ("null", Overflow::Null),
                    ],
                )
            }),
            division: division.and_then(|text| {
                parse_value(
                    text,
                    "division",
                    &mut error,
                    &[
                        ("truncate", Division::Truncate),
                        ("float", Division::Float),
                        ("half_up", Division::HalfUp),
                    ],
                )
            }),
        };
        if let Some(result) = result {
            shapes.push((
                key,
                Shape {
                    partial: fields,
                    result,
                    params,
                },
            ));
        }
    }
    if let (Some(phase), PerClass::Absent) = (distributed, &raw.partial) {
        error(
            &raw.phases_at,
            format!(
                "phase {} exchanges the partial layout, but the declaration gives no `partial`; add \
                 the layout or remove the phase",
                phase.as_str()
            ),
        );
    }
    // A value given for every class is checked once per class: report
    // each problem once.
    let mut seen = Vec::new();
    let mut index = before;
    while index < errors.len() {
        if seen.contains(&errors[index]) {
            errors.remove(index);
        } else {
            seen.push(errors[index].clone());
            index += 1;
        }
    }
    let failed = errors.len() > before;
    let template = template?;
    (!failed).then(|| CheckedDecl {
        decl: Declaration {
            template,
            functions,
            inputs,
            input_reason: raw.input_reason.clone(),
            distinct: raw.distinct,
            distinct_view: raw.distinct_view,
            phases,
            phases_reason: raw.phases_reason.clone(),
            numeric,
            shapes,
            location: raw.at.clone(),
        },
        named,
    })
}

fn parse_class(text: &str) -> Option<Numeric> {
    CLASSES.iter().find(|(s, _)| *s == text).map(|(_, c)| *c)
}

fn class_suffix(key: Option<Numeric>) -> String {
    key.map(|c| format!(" for numeric class {}", numeric_text(c)))
        .unwrap_or_default()
}

/// Parses a list of spellings; unknown or repeated ones are errors.
fn parse_list<T: PartialEq + Copy>(
    list: &[Located<String>],
    at: &Location,
    what: &str,
    error: &mut impl FnMut(&Location, String),
    parse: impl Fn(&str) -> Option<T>,
    known: Vec<&str>,
) -> Vec<T> {
    if list.is_empty() {
        error(at, format!("the {what} list is empty; name at least one"));
    }
    let mut out = Vec::new();
    for text in list {
        match parse(&text.value) {
            Some(v) if out.contains(&v) => error(
                &text.at,
                format!("{what} {} is listed twice; remove one", text.value),
            ),
            Some(v) => out.push(v),
            None => error(
                &text.at,
                unknown_name(what, &text.value, known.iter().copied()),
            ),
        }
    }
    out
}

/// The value of a per-class field for `key`.
fn pick<'a, T>(
    value: &'a PerClass<T>,
    key: Option<Numeric>,
    keys: &[Option<Numeric>],
    field: &str,
    error: &mut impl FnMut(&Location, String),
) -> Option<&'a T> {
    match value {
        PerClass::Absent => None,
        PerClass::All(v) => Some(v),
        PerClass::By(by) => {
            // Class names are checked once, with the first key.
            if Some(&key) == keys.first() {
                for (class, _) in by {
                    match parse_class(&class.value) {
                        None => error(
                            &class.at,
                            unknown_name(
                                "numeric class",
                                &class.value,
                                CLASSES.iter().map(|(s, _)| *s),
                            ),
                        ),
                        Some(c) if !keys.contains(&Some(c)) => error(
                            &class.at,
                            format!(
                                "`{field}` gives a value for class {}, which this template does not \
                                 accept (see `numeric`); remove it",
                                class.value
                            ),
                        ),
                        Some(_) => {}
                    }
                }
            }
            let Some(key) = key else {
                if let Some((class, _)) = by.first() {
                    if Some(&None) == keys.first() {
                        error(
                            &class.at,
                            format!(
                                "COUNT_STAR has no argument, so `{field}` cannot be given by numeric \
                                 class; write one value"
                            ),
                        );
                    }
                }
                return None;
            };
            let found = by
                .iter()
                .find(|(class, _)| parse_class(&class.value) == Some(key));
            if found.is_none() {
                // At the table's first key in the file.
                if let Some((class, _)) = by.iter().min_by_key(|(class, _)| class.at.line) {
                    error(
                        &class.at,
                        format!(
                            "`{field}` gives no value for numeric class {}; add `{} = ...`",
                            numeric_text(key),
                            numeric_text(key)
                        ),
                    );
                }
            }
            found.map(|(_, v)| v)
        }
    }
}

/// Parses a type expression used for arguments of class `key`.
fn type_expr(
    text: &Located<String>,
    key: Option<Numeric>,
    error: &mut impl FnMut(&Location, String),
    named: &mut Vec<(Option<Numeric>, String, Location)>,
) -> Option<TypeExpr> {
    let expr = match parse_type_expr(&text.value) {
        Ok(expr) => expr,
        Err(message) => {
            error(&text.at, message);
            return None;
        }
    };
    match (&expr, key) {
        (TypeExpr::Arg, None) => {
            error(
                &text.at,
                "COUNT_STAR has no argument, so `arg` means nothing here; name a type row such as `BIGINT`"
                    .into(),
            );
            return None;
        }
        (TypeExpr::Decimal { .. }, k) if k != Some(Numeric::Decimal) => {
            error(
                &text.at,
                format!(
                    "`{}` is only for DECIMAL arguments, but here it applies{}; give it under \
                     `decimal` in a table by numeric class",
                    text.value,
                    match k {
                        Some(c) => format!(" to numeric class {}", numeric_text(c)),
                        None => " to COUNT_STAR, which has no argument".into(),
                    }
                ),
            );
            return None;
        }
        (TypeExpr::Named(name), _) => named.push((key, name.clone(), text.at.clone())),
        _ => {}
    }
    Some(expr)
}

fn parse_value<T: Copy>(
    text: &Located<String>,
    what: &str,
    error: &mut impl FnMut(&Location, String),
    known: &[(&str, T)],
) -> Option<T> {
    let found = known
        .iter()
        .find(|(s, _)| *s == text.value)
        .map(|(_, v)| *v);
    if found.is_none() {
        error(
            &text.at,
            unknown_name(what, &text.value, known.iter().map(|(s, _)| *s)),
        );
    }
    found
}

fn is_field_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
