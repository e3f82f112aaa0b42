//! Rules for `[[entry]]` tables of family files.
//!
//! An entry names functions, an input mode, DISTINCT, type rows and
//! phases. The state template is the one whose declaration (see
//! [`crate::templates`]) serves the functions over that input mode; the
//! declaration also says which numeric classes of type rows and which
//! phases it takes, and its partial layout, result type and parameters,
//! which entries therefore no longer write.

use crate::error::SpecError;
use crate::load::{locate, Located, RawEntry, RawItem, Source};
use crate::model::{Declaration, Entry, Function, InputMode, Location, Phase, TypeRow};

use super::declarations::{classes_text, CheckedDecl};
use super::suggest::unknown_name;
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

/// The validated template declarations entries are checked against.
pub(crate) struct Decls<'a> {
    /// Every declaration that had no errors.
    pub checked: &'a [CheckedDecl],
    /// False when some declaration had errors: an entry whose functions
    /// find no template then reports nothing more (the declaration errors
    /// say what to fix).
    pub complete: bool,
}

impl Decls<'_> {
    fn serving(&self, f: Function, input: InputMode, distinct: bool) -> Option<&CheckedDecl> {
        self.checked
            .iter()
            .find(|c| c.decl.serves(f, input, distinct))
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
    decls: &Decls<'_>,
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

    // input, distinct
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

    // The template.
    let template = input.and_then(|input| {
        pick_template(
            &mut cx,
            decls,
            &functions,
            input,
            &input_text.at,
            distinct,
            &distinct_at,
        )
    });

    // Fields the template declares.
    for (field, at) in [
        ("state", raw.state.as_ref().map(|s| s.span())),
        ("partial", raw.partial.as_ref().map(|s| s.span())),
        ("result", raw.result.as_ref().map(|s| s.span())),
        ("params", raw.params.as_ref().map(|s| s.span())),
    ] {
        let Some(span) = at else { continue };
        let which = match template {
            Some(c) => format!(
                "here `{}`, declared at {}",
                c.decl.template.as_str(),
                c.decl.location
            ),
            None => "declared in runtime/src/templates/NAME.rs".into(),
        };
        let what = match field {
            "state" => "the state template follows from `functions` and `input`".to_string(),
            _ => format!(
                "the state template declares its {} per numeric class",
                describe(field)
            ),
        };
        cx.error(
            &source.location(&span),
            format!(
                "entries no longer write `{field}`: {what} ({which}); remove `{field}` from the entry"
            ),
        );
    }

    if let Some(checked) = template {
        check_against(&mut cx, checked, &functions, &phases, &rows);
    }

    let failed = cx.errors.len() > before;
    let entry = match (failed, input, template) {
        (false, Some(input), Some(template)) => Some(Entry {
            functions: functions.iter().map(|f| f.value).collect(),
            input,
            distinct,
            state: template.decl.template,
            phases: phases.iter().map(|p| p.value).collect(),
            types: type_names.iter().map(|t| t.value.clone()).collect(),
            location: item.at.clone(),
        }),
        _ => None,
    };
    CheckedEntry { entry, keys }
}

fn describe(field: &str) -> &'static str {
    match field {
        "partial" => "partial layout",
        "result" => "result type",
        _ => "template parameters",
    }
}

/// The template serving every function of the entry over `input`; errors
/// when none does or the functions need different ones.
fn pick_template<'d>(
    cx: &mut Check<'_>,
    decls: &'d Decls<'_>,
    functions: &[Located<Function>],
    input: InputMode,
    input_at: &Location,
    distinct: bool,
    distinct_at: &Location,
) -> Option<&'d CheckedDecl> {
    let mut chosen: Option<(&'d CheckedDecl, Function)> = None;
    let mut failed = false;
    for f in functions {
        let Some(found) = decls.serving(f.value, input, distinct) else {
            // Reported for the first such function only: the others
            // (MAX beside MIN) would repeat it.
            if decls.complete && !failed {
                no_template(cx, decls, f.value, input, input_at, distinct, distinct_at);
            }
            failed = true;
            continue;
        };
        match chosen {
            Some((first, g)) if first.decl.template != found.decl.template => {
                failed = true;
                cx.error(
                    &f.at,
                    format!(
                        "function {} is served by state template `{}` ({}), but {} by `{}`; an entry \
                         uses one template: put {} in its own entry",
                        f.value.as_str(),
                        found.decl.template.as_str(),
                        found.decl.location,
                        g.as_str(),
                        first.decl.template.as_str(),
                        f.value.as_str()
                    ),
                );
            }
            Some(_) => {}
            None => chosen = Some((found, f.value)),
        }
    }
    if failed {
        None
    } else {
        chosen.map(|(c, _)| c)
    }
}

/// Reports that no template serves `f` over `input` (DISTINCT or not).
fn no_template(
    cx: &mut Check<'_>,
    decls: &Decls<'_>,
    f: Function,
    input: InputMode,
    input_at: &Location,
    distinct: bool,
    distinct_at: &Location,
) {
    if distinct {
        let name = decls
            .serving(f, input, false)
            .map(|c| format!("state template `{}`", c.decl.template.as_str()))
            .unwrap_or_else(|| "no state template".into());
        cx.error(
            distinct_at,
            format!(
                "{} serves {} over {} input, and it cannot deduplicate values; DISTINCT needs a \
                 template that keeps the set of distinct values per group (with counts, Flink's \
                 distinct MapView), which does not exist yet: write distinct = false or add that \
                 template (declaring distinct = true)",
                name,
                f.as_str(),
                input.as_str()
            ),
        );
        return;
    }
    let other = decls
        .checked
        .iter()
        .find(|c| c.decl.functions.contains(&f) && c.decl.distinct == distinct);
    let message = match other {
        Some(c) => {
            let modes: Vec<&str> = c.decl.inputs.iter().map(|m| m.as_str()).collect();
            let reason = c
                .decl
                .input_reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            format!(
                "no state template serves {} over {} input: state template `{}` ({}) only accepts {} \
                 input{reason}; write input = \"{}\" or add a template declaring input \"{}\"",
                f.as_str(),
                input.as_str(),
                c.decl.template.as_str(),
                c.decl.location,
                modes.join(", "),
                modes[0],
                input.as_str()
            )
        }
        None => format!(
            "no state template serves {}; add a declaration listing it in `functions` to a template \
             in runtime/src/templates",
            f.as_str()
        ),
    };
    cx.error(input_at, message);
}

/// Checks the entry's type rows and phases against the template, and that
/// the type rows its declaration names exist.
fn check_against(
    cx: &mut Check<'_>,
    checked: &CheckedDecl,
    functions: &[Located<Function>],
    phases: &[Located<Phase>],
    rows: &[(&TypeRow, &Location)],
) {
    let decl: &Declaration = &checked.decl;
    let name = decl.template.as_str();
    for (row, at) in rows {
        if !decl.numeric.contains(&row.numeric) {
            cx.error(
                at,
                format!(
                    "type {} has numeric = \"{}\"; state template `{name}` needs an {} type row \
                     ({}): remove it from `types`",
                    row.name,
                    numeric_text(row.numeric),
                    classes_text(&decl.numeric),
                    decl.location
                ),
            );
        }
    }
    for phase in phases {
        if !decl.phases.contains(&phase.value) {
            let supported: Vec<&str> = decl.phases.iter().map(|p| p.as_str()).collect();
            let only = if supported.len() == 1 {
                format!("runs in the {} phase only", supported[0])
            } else {
                format!("runs in the phases {} only", supported.join(", "))
            };
            let reason = decl
                .phases_reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            cx.error(
                &phase.at,
                format!(
                    "state template `{name}` {only}{reason}; remove phase {}",
                    phase.value.as_str()
                ),
            );
        }
    }
    // Type rows the declaration names, for the classes the entry uses.
    let classes: Vec<_> = if functions.iter().all(|f| f.value.arity() == 0) {
        vec![(None, functions.first().map(|f| f.at.clone()))]
    } else {
        let mut classes = Vec::new();
        for (row, at) in rows {
            if !classes.iter().any(|(c, _)| *c == Some(row.numeric)) {
                classes.push((Some(row.numeric), Some((*at).clone())));
            }
        }
        classes
    };
    for (class, at) in classes {
        let Some(at) = at else { continue };
        let mut reported: Vec<&str> = Vec::new();
        for (key, type_name, declared) in &checked.named {
            if *key == class
                && !cx.table.declares(type_name)
                && !reported.contains(&type_name.as_str())
            {
                reported.push(type_name);
                cx.error(
                    &at,
                    format!(
                        "state template `{name}` names type row {type_name} (at {declared}), which \
                         types.toml does not declare; add that row to types.toml"
                    ),
                );
            }
        }
    }
}
