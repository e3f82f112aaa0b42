//! Rules for the `[[family]]` tables of `types.toml`: names, spellings,
//! parameter kinds and their bounds.

use std::collections::HashMap;

use crate::error::SpecError;
use crate::load::{locate, RawFamily, RawItem};
use crate::model::{Family, Location, ParamKind};

use super::names::Names;
use super::suggest::unknown_name;
use super::type_expr::is_row_name;

/// Spellings of parameter kinds.
const PARAM_KINDS: [(&str, ParamKind); 6] = [
    ("none", ParamKind::None),
    ("precision", ParamKind::Precision),
    ("decimal", ParamKind::Decimal),
    ("length", ParamKind::Length),
    ("ignored", ParamKind::Ignored),
    ("element", ParamKind::Element),
];

/// Flink's internal value classes (what `RowData` reads a field as).
pub(crate) const INTERNALS: [&str; 11] = [
    "byte",
    "short",
    "int",
    "long",
    "float",
    "double",
    "boolean",
    "decimal",
    "timestamp",
    "string",
    "array",
];

/// Largest precision a `precision` family may declare (the runtime keeps
/// precisions in a byte; Flink's largest is 9).
const MAX_FRACTIONAL: i64 = 9;

/// Largest decimal precision.
const MAX_DECIMAL: i64 = 38;

/// Largest length (Java's `Integer.MAX_VALUE`, Flink's STRING).
const MAX_LENGTH: i64 = i32::MAX as i64;

/// Families that passed their checks, plus every declared name (so rows
/// naming a broken family do not get a second error).
#[derive(Debug, Default)]
pub(crate) struct FamilyTable {
    /// Valid families in file order.
    pub families: Vec<Family>,
    /// Every declared name, in file order.
    pub names: Vec<String>,
}

impl FamilyTable {
    /// A valid family by name.
    pub fn family(&self, name: &str) -> Option<&Family> {
        self.families.iter().find(|f| f.name == name)
    }
}

/// Whether `text` is a spelling: upper-case words of letters, digits and
/// `_`, separated by single spaces, starting with a letter.
fn is_spelling(text: &str) -> bool {
    text.split(' ')
        .all(|word| is_row_name(word) || word.chars().all(|c| c.is_ascii_digit()))
        && text.starts_with(|c: char| c.is_ascii_uppercase())
}

/// Checks every family; returns the table.
pub(crate) fn check_families(
    items: &[RawItem<RawFamily>],
    errors: &mut Vec<SpecError>,
) -> FamilyTable {
    let mut table = FamilyTable::default();
    let mut names = Names::default();
    let mut spelled: HashMap<String, (String, Location)> = HashMap::new();
    for item in items {
        let raw = &item.raw;
        let source = &item.source;
        let before = errors.len();
        let name = locate(source, &raw.name);
        names.declare(&name, "family", "", "TIMESTAMP_LTZ", errors);

        let internal = locate(source, &raw.internal);
        if !INTERNALS.contains(&internal.value.as_str()) {
            errors.push(SpecError::new(
                internal.at.clone(),
                unknown_name("internal value class", &internal.value, INTERNALS),
            ));
        }

        let mut spellings = Vec::new();
        if raw.spellings.get_ref().is_empty() {
            errors.push(SpecError::new(
                source.location(&raw.spellings.span()),
                format!(
                    "`spellings` is empty; list how Flink writes the type, e.g. [\"{}\"]",
                    name.value
                ),
            ));
        }
        for spelling in raw.spellings.get_ref() {
            let spelling = locate(source, spelling);
            if !is_spelling(&spelling.value) {
                errors.push(SpecError::new(
                    spelling.at.clone(),
                    format!(
                        "spelling `{}` must be upper-case words separated by single spaces, without \
                         parameters (write \"TIMESTAMP WITH LOCAL TIME ZONE\" for TIMESTAMP(3) WITH \
                         LOCAL TIME ZONE)",
                        spelling.value
                    ),
                ));
            } else if let Some((other, at)) = spelled.get(&spelling.value) {
                errors.push(SpecError::new(
                    spelling.at.clone(),
                    format!(
                        "spelling `{}` already names family {other} ({at}); each spelling names one \
                         family: remove one",
                        spelling.value
                    ),
                ));
            } else {
                spelled.insert(
                    spelling.value.clone(),
                    (name.value.clone(), spelling.at.clone()),
                );
                spellings.push(spelling.value);
            }
        }

        let params_text = locate(source, &raw.params);
        let params = PARAM_KINDS
            .iter()
            .find(|(s, _)| *s == params_text.value)
            .map(|(_, k)| *k);
        if params.is_none() {
            errors.push(SpecError::new(
                params_text.at.clone(),
                unknown_name(
                    "parameter kind",
                    &params_text.value,
                    PARAM_KINDS.iter().map(|(s, _)| *s),
                ),
            ));
        }
        let bounds = params.and_then(|kind| check_bounds(item, kind, errors));

        let mut aliases = Vec::new();
        if let Some(raw_aliases) = &raw.aliases {
            let at = source.location(&raw_aliases.span());
            if params != Some(ParamKind::Length) {
                errors.push(SpecError::new(
                    at,
                    "`aliases` fix a length, so only families with params = \"length\" take them; \
                     remove it",
                ));
            } else {
                let max = bounds.map_or(MAX_LENGTH, |(_, max)| max as i64);
                for (alias, value) in raw_aliases.get_ref() {
                    let value_at = source.location(&value.span());
                    if !is_spelling(alias) {
                        errors.push(SpecError::new(
                            value_at,
                            format!("alias `{alias}` must be an upper-case word such as STRING"),
                        ));
                    } else if !(1..=max).contains(value.get_ref()) {
                        errors.push(SpecError::new(
                            value_at,
                            format!(
                                "alias {alias} = {} is not a length of this family (1 to {max}); fix it",
                                value.get_ref()
                            ),
                        ));
                    } else if let Some((other, other_at)) = spelled.get(alias) {
                        errors.push(SpecError::new(
                            value_at,
                            format!(
                                "alias `{alias}` already names family {other} ({other_at}); remove one"
                            ),
                        ));
                    } else {
                        spelled.insert(alias.clone(), (name.value.clone(), value_at));
                        aliases.push((alias.clone(), *value.get_ref() as u32));
                    }
                }
            }
        }

        if errors.len() > before {
            continue;
        }
        if let Some(params) = params {
            table.families.push(Family {
                name: name.value,
                internal: internal.value,
                spellings,
                params,
                default: bounds.map(|(default, _)| default),
                max: bounds.map(|(_, max)| max),
                aliases,
                location: item.at.clone(),
            });
        }
    }
    table.names = names.in_order;
    table
}

/// Checks `default` and `max` for the parameter kind: (default, max) for
/// kinds that take them, `None` otherwise or after an error.
fn check_bounds(
    item: &RawItem<RawFamily>,
    kind: ParamKind,
    errors: &mut Vec<SpecError>,
) -> Option<(u32, u32)> {
    let raw = &item.raw;
    let source = &item.source;
    let (low, limit, what) = match kind {
        ParamKind::Precision => (0, MAX_FRACTIONAL, "precision"),
        ParamKind::Decimal => (1, MAX_DECIMAL, "precision"),
        ParamKind::Length => (1, MAX_LENGTH, "length"),
        ParamKind::None | ParamKind::Ignored | ParamKind::Element => {
            for field in [&raw.default, &raw.max].into_iter().flatten() {
                errors.push(SpecError::new(
                    source.location(&field.span()),
                    "this family's parameters are `none`, `ignored` or `element`, so it has no \
                     default or max; remove the field",
                ));
            }
            return None;
        }
    };
    let (Some(default), Some(max)) = (&raw.default, &raw.max) else {
        errors.push(SpecError::new(
            item.at.clone(),
            format!(
                "a family with params = \"{}\" needs `default` and `max` (its default and largest \
                 {what}); add both",
                match kind {
                    ParamKind::Precision => "precision",
                    ParamKind::Decimal => "decimal",
                    _ => "length",
                }
            ),
        ));
        return None;
    };
    let max_at = source.location(&max.span());
    let max = *max.get_ref();
    if !(low..=limit).contains(&max) {
        errors.push(SpecError::new(
            max_at,
            format!("max = {max} is out of range; a {what} here is {low} to {limit}"),
        ));
        return None;
    }
    let default_at = source.location(&default.span());
    let default = *default.get_ref();
    if !(low..=max).contains(&default) {
        errors.push(SpecError::new(
            default_at,
            format!("default = {default} is outside {low} to max = {max}; fix it"),
        ));
        return None;
    }
    Some((default as u32, max as u32))
}
