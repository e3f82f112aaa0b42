//! The Rust emitter: renders a validated [`SpecSet`] into the registry that
//! `aggforge_macros::include_specs!` includes into the runtime (one
//! instantiated generic type and one constructor per specialization, the
//! admission table, the type-row matcher), and into the readable listing
//! `aggforge expand` prints.
//!
//! The generated code refers to the runtime by `crate::` paths (it is
//! included into `aggforge-runtime`): `crate::templates` for the generic
//! accumulator and the template rules, `crate::kernel` for the state
//! kernels, `crate::registry::Admission`.

mod instantiate;
mod registry;
mod types;

use std::fmt;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Function, InputMode, Location, Phase, SpecSet, Specialization};

/// A spec combination the emitter cannot render, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitError {
    /// `file:line` of the offending entry or type row.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

impl EmitError {
    pub(crate) fn new(location: &Location, message: impl Into<String>) -> EmitError {
        EmitError {
            location: location.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for EmitError {}

/// `specs/extreme.toml:29`: the spec file's directory name, file name and
/// line, whatever path the loader was given.
pub(crate) fn short_location(location: &Location) -> String {
    let file = location
        .file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned());
    let dir = location
        .file
        .parent()
        .and_then(|p| p.file_name())
        .map(|d| d.to_string_lossy().into_owned());
    match (dir, file) {
        (Some(dir), Some(file)) => format!("{dir}/{file}:{}", location.line),
        _ => location.to_string(),
    }
}

/// The imports the generated items use.
fn prelude() -> TokenStream {
    quote! {
        #[allow(unused_imports)]
        use arrow_array::{Array, ArrayRef};
        #[allow(unused_imports)]
        use arrow_schema::{DataType, TimeUnit};
        #[allow(unused_imports)]
        use crate::accumulator::{BatchUpdate, GroupAccumulator};
        #[allow(unused_imports)]
        use crate::error::Result;
        #[allow(unused_imports)]
        use crate::kernel::Binding;
        #[allow(unused_imports)]
        use crate::types::SqlType;
    }
}

/// Everything generated from `specs`: one instantiated type and
/// constructor per specialization, then the registry table and type
/// matcher.
/// Every error is reported, not just the first.
pub fn emit(specs: &SpecSet) -> Result<TokenStream, Vec<EmitError>> {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for spec in specs.specializations() {
        match instantiate::specialization(specs, &spec) {
            Ok(tokens) => items.push(tokens),
            Err(error) => errors.push(error),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let prelude = prelude();
    let registry = registry::registry(specs);
    Ok(quote! {
        #prelude
        #(#items)*
        #registry
    })
}

/// The generated code of one specialization (its instantiated generic type
/// and constructor), unformatted.
pub fn emit_specialization(
    specs: &SpecSet,
    spec: &Specialization<'_>,
) -> Result<TokenStream, EmitError> {
    instantiate::specialization(specs, spec)
}

/// Formats tokens as Rust source (prettyplease).
pub fn pretty(tokens: TokenStream) -> Result<String, String> {
    let file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("generated code does not parse: {e}"))?;
    Ok(prettyplease::unparse(&file))
}

/// The `GroupAccumulator` methods each phase calls.
pub fn phase_methods(phase: Phase) -> &'static str {
    match phase {
        Phase::Single => "update, update_traced (immediate emission) or update + mark_changed (mini-batch), evaluate",
        Phase::Local => "update, partials, reset",
        Phase::Global => "merge, evaluate (and mark_changed for mini-batch)",
    }
}

/// Finds a specialization by function spelling and type row name
/// (case-insensitive; no type for COUNT_STAR). Insert-only, non-DISTINCT
/// entries are preferred when several entries declare the pair.
pub fn find<'a>(
    specs: &'a SpecSet,
    function: &str,
    type_row: Option<&str>,
    input: InputMode,
) -> Result<Specialization<'a>, String> {
    let all = specs.specializations();
    let Some(func) = Function::parse(function) else {
        let functions: Vec<&str> = Function::ALL.iter().map(|f| f.as_str()).collect();
        return Err(format!(
            "unknown function '{function}'; known functions: {}",
            functions.join(", ")
        ));
    };
    if let Some(name) = type_row {
        if !specs
            .types
            .iter()
            .any(|t| t.name.eq_ignore_ascii_case(name))
        {
            let rows: Vec<&str> = specs.types.iter().map(|t| t.name.as_str()).collect();
            return Err(format!(
                "unknown type row '{name}'; type rows in types.toml: {}",
                rows.join(", ")
            ));
        }
    }
    let mut matches: Vec<Specialization<'a>> = all
        .iter()
        .copied()
        .filter(|s| {
            s.function == func
                && s.entry.input == input
                && match (s.ty, type_row) {
                    (Some(t), Some(name)) => t.name.eq_ignore_ascii_case(name),
                    (None, None) => true,
                    _ => false,
                }
        })
        .collect();
    matches.sort_by_key(|s| s.entry.distinct);
    matches.into_iter().next().ok_or_else(|| {
        let mut rows: Vec<&str> = all
            .iter()
            .filter(|s| s.function == func && s.entry.input == input)
            .map(|s| s.ty.map(|t| t.name.as_str()).unwrap_or("(no argument)"))
            .collect();
        rows.dedup();
        format!(
            "no {} specialization for {} {}; {} is specialized for: {}",
            input.as_str(),
            func.as_str(),
            type_row.unwrap_or("(no argument)"),
            func.as_str(),
            if rows.is_empty() {
                "nothing".to_string()
            } else {
                rows.join(", ")
            }
        )
    })
}

/// The readable listing `aggforge expand` prints: a header naming the spec
/// location and the methods `phase` calls, then the formatted code.
pub fn expand(
    specs: &SpecSet,
    function: &str,
    type_row: Option<&str>,
    phase: Phase,
    input: InputMode,
) -> Result<String, String> {
    let spec = find(specs, function, type_row, input)?;
    if !spec.entry.phases.contains(&phase) {
        let listed: Vec<&str> = spec.entry.phases.iter().map(|p| p.as_str()).collect();
        return Err(format!(
            "phase {} not listed for {} (declared at {}); listed phases: {}",
            phase.as_str(),
            spec.display_name(),
            spec.entry.location,
            listed.join(", ")
        ));
    }
    let tokens = emit_specialization(specs, &spec).map_err(|e| e.to_string())?;
    let prelude = prelude();
    let code = pretty(quote! { #prelude #tokens })?;
    let header = format!(
        "// {name}: generated by aggforge from {at}\n\
         // state template: {template}; phases declared: {phases}\n\
         // rule: {rule}\n\
         // plumbing: runtime/src/templates/mod.rs (Accumulator, one GroupAccumulator impl), \
         runtime/src/templates/state.rs (the state kernel's calls)\n\
         // phase {phase} calls: {methods}\n\
         // every phase: snapshot / restore (checkpoints), memory_bytes, resize\n\
         // (the `type_row_of` matcher and the registry row live in the generated registry)\n\n",
        rule = rule_source(&spec),
        name = spec.display_name(),
        at = spec.entry.location,
        template = spec.entry.state.as_str(),
        phases = spec
            .entry
            .phases
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        phase = phase.as_str(),
        methods = phase_methods(phase),
    );
    Ok(header + &code)
}

/// `TEMPLATES/NAME.rs:LINE (impl ...)`: where the rule of a
/// specialization's template is written: its `...Rule for` impl, or for
/// templates without a rule (the counts) the state's `TemplateState` impl
/// in `state.rs` beside it. Found in the file the template's declaration
/// was read from; that file's path when the line is not found.
fn rule_source(spec: &Specialization<'_>) -> String {
    let file = &spec.template.location.file;
    let find = |path: &std::path::Path, needle: &str| -> Option<String> {
        let text = std::fs::read_to_string(path).ok()?;
        let (index, line) = text
            .lines()
            .enumerate()
            .find(|(_, line)| line.starts_with("impl") && line.contains(needle))?;
        let line_text = line.trim_end_matches('{').trim();
        Some(format!("{}:{} ({line_text})", path.display(), index + 1))
    };
    find(file, "Rule for ")
        .or_else(|| find(&file.with_file_name("state.rs"), "TemplateState for Counts"))
        .unwrap_or_else(|| file.display().to_string())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::Function;

    fn specs() -> SpecSet {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        crate::load_dir(
            &root.join("../specs"),
            &root.join("../runtime/src/templates"),
        )
        .expect("specs load")
    }

    fn extreme_entry(specs: &mut SpecSet) -> &mut crate::model::Entry {
        specs
            .entries
            .iter_mut()
            .find(|e| e.functions.contains(&Function::Min) && !e.distinct)
            .expect("a MIN entry")
    }

    #[test]
    fn one_more_type_in_an_entry_is_one_more_struct_and_registry_row() {
        let mut without = specs();
        extreme_entry(&mut without).types.retain(|t| t != "BOOLEAN");
        let code = emit(&without).expect("emits").to_string();
        assert!(!code.contains("type MinBoolean "));
        assert!(code.contains("type MinBooleanRetract "));
        assert!(!code.contains("\"MIN<BOOLEAN>/insert_only\""));

        let mut with = without.clone();
        extreme_entry(&mut with).types.push("BOOLEAN".into());
        let code = emit(&with).expect("emits").to_string();
        assert!(code.contains("pub type MinBoolean"));
        assert!(code.contains("pub type MaxBoolean"));
        assert!(code.contains("rules :: BoolOrder , crate :: templates :: rules :: Min"));
        assert!(code.contains("name : \"MIN<BOOLEAN>/insert_only\""));
        assert!(code.contains("new_min_boolean (arg)"));
        // The generated code parses as a Rust file.
        pretty(emit(&with).unwrap()).expect("parses");
    }

    #[test]
    fn float_and_integer_extremes_get_their_own_rules() {
        let specs = specs();
        let int = find(&specs, "MIN", Some("INT"), InputMode::InsertOnly).unwrap();
        let int = emit_specialization(&specs, &int).unwrap().to_string();
        assert!(
            int.contains(
                "TotalOrder < crate :: kernel :: Prim < arrow_array :: types :: Int32Type > >"
            ),
            "identity-initialized integer MIN: {int}"
        );
        let float = find(&specs, "MIN", Some("DOUBLE"), InputMode::InsertOnly).unwrap();
        let float = emit_specialization(&specs, &float).unwrap().to_string();
        assert!(
            float.contains(
                "JavaFloat < crate :: kernel :: Prim < arrow_array :: types :: Float64Type > >"
            ),
            "{float}"
        );
        let sum = find(&specs, "SUM", Some("DECIMAL_18"), InputMode::InsertOnly).unwrap();
        let sum = emit_specialization(&specs, &sum).unwrap().to_string();
        assert!(
            sum.contains(
                "Sum < crate :: templates :: rules :: Decimal38 < crate :: kernel :: Dec64 >"
            ),
            "{sum}"
        );
    }

    #[test]
    fn expand_names_the_spec_and_the_phase_methods() {
        let specs = specs();
        let insert_only = InputMode::InsertOnly;
        let text = expand(&specs, "min", Some("int"), Phase::Single, insert_only).unwrap();
        assert!(text.starts_with("// MIN<INT>/insert_only: generated by aggforge from "));
        assert!(text.contains("extreme.toml:"));
        assert!(text.contains("phase single calls: update, update_traced"));
        assert!(text.contains("pub type MinInt"));
        assert!(text.contains("running_extreme.rs:"), "{text}");
        let local = expand(&specs, "COUNT_STAR", None, Phase::Local, insert_only).unwrap();
        assert!(local.contains("phase local calls: update, partials, reset"));
        let err = expand(&specs, "MEDIAN", Some("INT"), Phase::Single, insert_only).unwrap_err();
        assert!(err.contains("known functions: MIN, MAX"), "{err}");
        let err = expand(&specs, "SUM", Some("DATE"), Phase::Single, insert_only).unwrap_err();
        assert!(err.contains("SUM is specialized for: TINYINT"), "{err}");
        let retracting = InputMode::Retracting;
        let text = expand(&specs, "MAX", Some("INT"), Phase::Single, retracting).unwrap();
        assert!(text.starts_with("// MAX<INT>/retracting: "), "{text}");
        assert!(text.contains("state template: counted_extreme"));
        assert!(text.contains("pub type MaxIntRetract"));
        assert!(text.contains("counted_extreme.rs:"), "{text}");
        let local = expand(&specs, "MAX", Some("INT"), Phase::Local, retracting).unwrap();
        assert!(
            local.contains(">::partial_types(&DataType::Int32)"),
            "{local}"
        );
        let err = expand(&specs, "FIRST_VALUE", Some("INT"), Phase::Local, retracting).unwrap_err();
        assert!(
            err.contains("phase local not listed for FIRST_VALUE<INT>/retracting"),
            "{err}"
        );
    }

    #[test]
    fn a_template_that_does_not_fit_the_type_is_an_error_with_location() {
        let mut specs = specs();
        let sum = specs
            .entries
            .iter_mut()
            .find(|e| e.functions.contains(&Function::Sum) && !e.distinct)
            .unwrap();
        sum.types.push("BOOLEAN".into());
        let errors = emit(&specs).unwrap_err();
        assert!(
            errors.iter().any(|e| e.location.contains("sum.toml:")),
            "{errors:?}"
        );
    }
}
