//! The Rust emitter: renders a validated [`SpecSet`] into the accumulators,
//! rule impls and registry that `aggforge_macros::include_specs!` includes
//! into the runtime, and into the readable listing `aggforge expand` prints.
//!
//! The generated code refers to the runtime by `crate::` paths (it is
//! included into `aggforge-runtime`): `crate::kernel` for the generic loops,
//! `crate::accumulator::GroupAccumulator`, `crate::registry::Admission`.

mod registry;
mod templates;
mod types;

use std::fmt;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Function, Location, Phase, SpecSet, Specialization};

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

/// Everything generated from `specs`: one struct per specialization with
/// its rule and trait impls, then the registry table and type matcher.
/// Every error is reported, not just the first.
pub fn emit(specs: &SpecSet) -> Result<TokenStream, Vec<EmitError>> {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for spec in specs.specializations() {
        match templates::specialization(specs, &spec) {
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

/// The generated code of one specialization (struct, rule impl,
/// `GroupAccumulator`, `GroupsAccumulator`), unformatted.
pub fn emit_specialization(
    specs: &SpecSet,
    spec: &Specialization<'_>,
) -> Result<TokenStream, EmitError> {
    templates::specialization(specs, spec)
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
) -> Result<Specialization<'a>, String> {
    let all = specs.specializations();
    let known = || {
        let mut names: Vec<String> = all
            .iter()
            .map(|s| match s.ty {
                Some(t) => format!("{} {}", s.function.as_str(), t.name),
                None => s.function.as_str().to_string(),
            })
            .collect();
        names.dedup();
        names.join(", ")
    };
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
                && match (s.ty, type_row) {
                    (Some(t), Some(name)) => t.name.eq_ignore_ascii_case(name),
                    (None, None) => true,
                    _ => false,
                }
        })
        .collect();
    matches.sort_by_key(|s| (s.entry.input, s.entry.distinct));
    matches.into_iter().next().ok_or_else(|| {
        format!(
            "no specialization for {} {}; known specializations: {}",
            func.as_str(),
            type_row.unwrap_or("(no argument)"),
            known()
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
) -> Result<String, String> {
    let spec = find(specs, function, type_row)?;
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
         // phase {phase} calls: {methods}\n\
         // every phase: snapshot / restore (checkpoints), memory_bytes, resize\n\
         // (the `type_row_of` matcher and the registry row live in the generated registry)\n\n",
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
