//! Validation: turns the raw tables read by [`crate::load`] into a
//! [`SpecSet`], collecting every error with the line of the offending value.
//!
//! Rules for families live in the `families` submodule, for type rows in
//! `types`, for state template declarations in `declarations`, for entries
//! in `entries`; this module adds the cross-entry rule (no specialization
//! declared twice)
//! and orders the errors.

mod declarations;
mod entries;
mod families;
mod names;
mod suggest;
mod type_expr;
mod types;

use std::collections::HashMap;
use std::path::PathBuf;

pub use type_expr::{parse_type_expr, type_expr_text};

use crate::error::{SpecError, SpecErrors};
use crate::load::{RawEntry, RawFamily, RawItem, RawTypeRow};
use crate::model::{Location, SpecSet};
use crate::templates::Templates;

pub use suggest::unknown_name;

/// Validates raw rows, template declarations and entries; `errors` holds
/// errors found while reading; `order` is the file order errors are
/// reported in.
pub(crate) fn validate(
    family_items: Vec<RawItem<RawFamily>>,
    type_items: Vec<RawItem<RawTypeRow>>,
    templates: &Templates,
    entry_items: Vec<RawItem<RawEntry>>,
    mut errors: Vec<SpecError>,
    order: &[PathBuf],
) -> Result<SpecSet, SpecErrors> {
    let families = families::check_families(&family_items, &mut errors);
    let table = types::check_rows(&type_items, &families, &mut errors);
    if type_items.is_empty() && errors.is_empty() {
        let file = order
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n == crate::load::TYPES_FILE))
            .cloned()
            .unwrap_or_else(|| PathBuf::from(crate::load::TYPES_FILE));
        errors.push(SpecError::new(
            Location { file, line: 1 },
            "types.toml declares no [[type]] rows; add at least one",
        ));
    }
    let (checked, complete) = declarations::check_declarations(templates, &mut errors);
    let decls = entries::Decls {
        checked: &checked,
        complete,
    };
    let mut entries = Vec::new();
    let mut first: HashMap<entries::SpecKey, Location> = HashMap::new();
    for item in &entry_items {
        let checked = entries::check_entry(item, &table, &decls, &mut errors);
        for (key, at) in checked.keys {
            if let Some(previous) = first.get(&key) {
                let (function, ty, input, distinct) = &key;
                errors.push(SpecError::new(
                    at,
                    format!(
                        "{}{}<{}>/{} is already declared at {previous}; remove one of the two declarations",
                        function.as_str(),
                        if *distinct { " DISTINCT" } else { "" },
                        ty.as_deref().unwrap_or("*"),
                        input.as_str()
                    ),
                ));
            } else {
                first.insert(key, at);
            }
        }
        entries.extend(checked.entry);
    }
    if errors.is_empty() {
        return Ok(SpecSet {
            families: families.families,
            types: table.rows,
            templates: checked.into_iter().map(|c| c.decl).collect(),
            entries,
        });
    }
    let rank = |file: &PathBuf| order.iter().position(|p| p == file).unwrap_or(usize::MAX);
    errors.sort_by_key(|e| (rank(&e.location.file), e.location.line));
    Err(SpecErrors(errors))
}
