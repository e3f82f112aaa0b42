//! Rules for `types.toml` rows.
//!
//! A row's SQL family (a `[[family]]` table) fixes its precision bounds and
//! Flink's internal value class, hence the Arrow layouts that fit; the
//! Arrow layout fixes the access pattern and the carrier(s); the carrier
//! fixes the MIN/MAX order. Error texts name the value to write instead.

use crate::error::SpecError;
use crate::load::{locate, Located, RawItem, RawTypeRow};
use crate::model::{
    Access, Carrier, Equality, Family, Location, Numeric, Order, ParamKind, TypeRow,
};

use super::families::FamilyTable;

use super::names::Names;
use super::suggest::unknown_name;

/// Largest precision any row may cover.
const MAX_PRECISION: i64 = 38;

/// Spellings of carriers.
pub(crate) const CARRIERS: [(&str, Carrier); 10] = [
    ("i8", Carrier::I8),
    ("i16", Carrier::I16),
    ("i32", Carrier::I32),
    ("i64", Carrier::I64),
    ("i128", Carrier::I128),
    ("f32", Carrier::F32),
    ("f64", Carrier::F64),
    ("bool", Carrier::Bool),
    ("Timestamp", Carrier::Timestamp),
    ("bytes", Carrier::Bytes),
];

const ACCESSES: [(&str, Access); 6] = [
    ("primitive", Access::Primitive),
    ("boolean", Access::Boolean),
    ("decimal", Access::Decimal),
    ("timestamp", Access::Timestamp),
    ("utf8", Access::Utf8),
    ("list", Access::List),
];

const ORDERS: [(&str, Order); 6] = [
    ("primitive", Order::Primitive),
    ("signed", Order::Signed),
    ("boolean", Order::Boolean),
    ("bytes", Order::Bytes),
    ("timestamp", Order::Timestamp),
    ("none", Order::None),
];

const EQUALITIES: [(&str, Equality); 2] = [
    ("primitive", Equality::Primitive),
    ("exact", Equality::Exact),
];

const NUMERICS: [(&str, Numeric); 4] = [
    ("integer", Numeric::Integer),
    ("float", Numeric::Float),
    ("decimal", Numeric::Decimal),
    ("none", Numeric::None),
];

/// Arrow layouts the runtime and the Java transposes read and write:
/// (spelling, access, carriers, largest precision it holds, the Flink
/// internal value class it carries).
#[allow(clippy::type_complexity)]
pub(crate) const ARROWS: [(&str, Access, &[Carrier], Option<i64>, &str); 14] = [
    ("Int8", Access::Primitive, &[Carrier::I8], None, "byte"),
    ("Int16", Access::Primitive, &[Carrier::I16], None, "short"),
    ("Int32", Access::Primitive, &[Carrier::I32], None, "int"),
    ("Int64", Access::Primitive, &[Carrier::I64], None, "long"),
    ("Float32", Access::Primitive, &[Carrier::F32], None, "float"),
    (
        "Float64",
        Access::Primitive,
        &[Carrier::F64],
        None,
        "double",
    ),
    (
        "Decimal128",
        Access::Decimal,
        &[Carrier::I64, Carrier::I128],
        None,
        "decimal",
    ),
    ("Date32", Access::Primitive, &[Carrier::I32], None, "int"),
    (
        "Time32(Millisecond)",
        Access::Primitive,
        &[Carrier::I32],
        Some(3),
        "int",
    ),
    (
        "Timestamp(Millisecond)",
        Access::Primitive,
        &[Carrier::I64],
        Some(3),
        "timestamp",
    ),
    (
        "Struct(Timestamp)",
        Access::Timestamp,
        &[Carrier::Timestamp],
        None,
        "timestamp",
    ),
    (
        "Boolean",
        Access::Boolean,
        &[Carrier::Bool],
        None,
        "boolean",
    ),
    ("Utf8", Access::Utf8, &[Carrier::Bytes], None, "string"),
    ("List", Access::List, &[Carrier::Bytes], None, "array"),
];

/// One Arrow layout row of [`ARROWS`].
type ArrowRow = (
    &'static str,
    Access,
    &'static [Carrier],
    Option<i64>,
    &'static str,
);

/// Spec spelling of a carrier.
pub(crate) fn carrier_text(carrier: Carrier) -> &'static str {
    CARRIERS
        .iter()
        .find(|(_, c)| *c == carrier)
        .map(|(s, _)| *s)
        .unwrap_or("?")
}

/// Spec spelling of an arithmetic class.
pub(crate) fn numeric_text(numeric: Numeric) -> &'static str {
    NUMERICS
        .iter()
        .find(|(_, n)| *n == numeric)
        .map(|(s, _)| *s)
        .unwrap_or("?")
}

fn spelling<T: PartialEq + Copy>(table: &[(&'static str, T)], value: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map(|(s, _)| *s)
        .unwrap_or("?")
}

/// The largest unscaled decimal digits a carrier holds exactly.
fn decimal_digits(carrier: Carrier) -> i64 {
    match carrier {
        Carrier::I64 => 18,
        _ => 38,
    }
}

/// The MIN/MAX order a carrier needs (none for list access: an ARRAY's
/// encoded bytes order nothing Flink orders).
fn order_for(carrier: Carrier, access: Option<Access>) -> Order {
    if access == Some(Access::List) {
        return Order::None;
    }
    match carrier {
        Carrier::I8 | Carrier::I16 | Carrier::I32 | Carrier::I64 | Carrier::I128 => Order::Signed,
        Carrier::F32 | Carrier::F64 => Order::Primitive,
        Carrier::Bool => Order::Boolean,
        Carrier::Bytes => Order::Bytes,
        Carrier::Timestamp => Order::Timestamp,
    }
}

/// Rows that passed their checks, plus the names of every row that was
/// read at all (so entries naming a broken row do not get a second error).
#[derive(Debug, Default)]
pub(crate) struct TypeTable {
    /// Valid rows in file order.
    pub rows: Vec<TypeRow>,
    /// Every declared name, in file order.
    pub names: Vec<String>,
}

impl TypeTable {
    /// A valid row by name.
    pub fn row(&self, name: &str) -> Option<&TypeRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// Whether any row (valid or not) declares `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

/// A row's precision range as seen so far: (family, range (`None` = every
/// precision), location of the range or name, row name).
type RangeSeen = (String, Option<(i64, i64)>, Location, String);

/// Checks every row; returns the table of rows.
pub(crate) fn check_rows(
    items: &[RawItem<RawTypeRow>],
    families: &FamilyTable,
    errors: &mut Vec<SpecError>,
) -> TypeTable {
    let mut table = TypeTable::default();
    let mut names = Names::default();
    let mut ranges: Vec<RangeSeen> = Vec::new();
    if items.is_empty() {
        return table;
    }
    for item in items {
        let raw = &item.raw;
        let source = &item.source;
        let before = errors.len();
        let name = locate(source, &raw.name);
        names.declare(
            &name,
            "type row",
            " (it becomes part of Rust identifiers)",
            "DECIMAL_18",
            errors,
        );

        let sql = locate(source, &raw.sql);
        let family = families.family(&sql.value);
        if family.is_none() && !families.names.contains(&sql.value) {
            errors.push(SpecError::new(
                sql.at.clone(),
                unknown_name(
                    "SQL family",
                    &sql.value,
                    families.names.iter().map(String::as_str),
                ),
            ));
        }
        let arrow = locate(source, &raw.arrow);
        let arrow_row = ARROWS.iter().find(|a| a.0 == arrow.value);
        if arrow_row.is_none() {
            errors.push(SpecError::new(
                arrow.at.clone(),
                unknown_name("Arrow type", &arrow.value, ARROWS.iter().map(|a| a.0)),
            ));
        }
        let carrier = parse_enum(source, &raw.carrier, "carrier", &CARRIERS, errors);
        let access = parse_enum(source, &raw.access, "access", &ACCESSES, errors);
        let order = parse_enum(source, &raw.order, "order", &ORDERS, errors);
        let equality = parse_enum(source, &raw.equality, "equality", &EQUALITIES, errors);
        let numeric = parse_enum(source, &raw.numeric, "numeric", &NUMERICS, errors);

        // Family -> Arrow layout: the layout must carry Flink's internal
        // value class of the family.
        if let (Some(family), Some(arrow_row)) = (family, arrow_row) {
            if arrow_row.4 != family.internal {
                let fitting = ARROWS
                    .iter()
                    .filter(|a| a.4 == family.internal)
                    .map(|a| a.0);
                errors.push(SpecError::new(
                    arrow.at.clone(),
                    format!(
                        "Arrow {} carries Flink `{}` values, but SQL {} is held as `{}`; write arrow = {}",
                        arrow.value,
                        arrow_row.4,
                        family.name,
                        family.internal,
                        quoted_alternatives(fitting)
                    ),
                ));
            }
        }
        // Arrow type -> access and carrier.
        if let (Some(arrow_row), Some(access)) = (arrow_row, &access) {
            if access.value != arrow_row.1 {
                errors.push(SpecError::new(
                    access.at.clone(),
                    format!(
                        "access `{}` cannot read an Arrow {} column; write access = \"{}\"",
                        spelling(&ACCESSES, access.value),
                        arrow_row.0,
                        spelling(&ACCESSES, arrow_row.1)
                    ),
                ));
            }
        }
        if let (Some(arrow_row), Some(carrier)) = (arrow_row, &carrier) {
            if !arrow_row.2.contains(&carrier.value) {
                errors.push(SpecError::new(
                    carrier.at.clone(),
                    format!(
                        "carrier `{}` cannot hold Arrow {} values; write carrier = {}",
                        carrier_text(carrier.value),
                        arrow_row.0,
                        quoted_alternatives(arrow_row.2.iter().map(|c| carrier_text(*c)))
                    ),
                ));
            }
        }
        // Carrier -> order and equality.
        if let (Some(carrier), Some(order)) = (&carrier, &order) {
            let wanted = order_for(carrier.value, access.as_ref().map(|a| a.value));
            if order.value != wanted {
                errors.push(SpecError::new(
                    order.at.clone(),
                    format!(
                        "order `{}` does not fit carrier `{}`; {} values compare with order = \"{}\" \
                         (primitive is Java `<` for f32/f64, signed for integers, boolean for bool, \
                         bytes for bytes, timestamp for Timestamp, none for list access)",
                        spelling(&ORDERS, order.value),
                        carrier_text(carrier.value),
                        carrier_text(carrier.value),
                        spelling(&ORDERS, wanted)
                    ),
                ));
            }
        }
        if let (Some(carrier), Some(equality)) = (&carrier, &equality) {
            let float = matches!(carrier.value, Carrier::F32 | Carrier::F64);
            if equality.value == Equality::Primitive && !float {
                errors.push(SpecError::new(
                    equality.at.clone(),
                    format!(
                        "equality `primitive` (Java `==`, NaN != NaN) only differs from `exact` on f32/f64; \
                         carrier `{}` needs equality = \"exact\"",
                        carrier_text(carrier.value)
                    ),
                ));
            }
        }

        // Precision.
        let precision = check_precision(item, family, arrow_row, &carrier, &access, errors);
        if let (Some(family), Ok(range)) = (family, &precision) {
            // A row without a range covers every precision of its family.
            let span = range.unwrap_or((0, MAX_PRECISION));
            let at = match &raw.precision {
                Some(p) => source.location(&p.span()),
                None => name.at.clone(),
            };
            for (other_family, other, other_at, other_name) in &ranges {
                let other_span = other.unwrap_or((0, MAX_PRECISION));
                if *other_family == family.name && span.0 <= other_span.1 && other_span.0 <= span.1
                {
                    errors.push(SpecError::new(
                        at.clone(),
                        format!(
                            "row `{}` covers {} of SQL {}, which overlaps row `{other_name}` ({other_at}) \
                             covering {}; each {} precision must pick exactly one row, so make the ranges \
                             disjoint",
                            name.value,
                            range_text(*range),
                            family.name,
                            range_text(*other),
                            family.name
                        ),
                    ));
                }
            }
            ranges.push((family.name.clone(), *range, at, name.value.clone()));
        }

        if errors.len() > before {
            continue;
        }
        if let (
            Some(carrier),
            Some(access),
            Some(order),
            Some(equality),
            Some(numeric),
            Ok(precision),
        ) = (carrier, access, order, equality, numeric, precision)
        {
            table.rows.push(TypeRow {
                name: name.value,
                sql: sql.value,
                precision: precision.map(|(lo, hi)| (lo as u8, hi as u8)),
                arrow: arrow.value,
                carrier: carrier.value,
                access: access.value,
                order: order.value,
                equality: equality.value,
                numeric: numeric.value,
                location: item.at.clone(),
            });
        }
    }
    table.names = names.in_order;
    table
}

fn range_text(range: Option<(i64, i64)>) -> String {
    match range {
        Some((lo, hi)) => format!("precisions [{lo}, {hi}]"),
        None => "every precision".to_string(),
    }
}

fn quoted_alternatives<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Checks `precision = [min, max]`; `Err(())` when an error was reported.
fn check_precision(
    item: &RawItem<RawTypeRow>,
    family: Option<&Family>,
    arrow: Option<&ArrowRow>,
    carrier: &Option<Located<Carrier>>,
    access: &Option<Located<Access>>,
    errors: &mut Vec<SpecError>,
) -> Result<Option<(i64, i64)>, ()> {
    let source = &item.source;
    let Some(precision) = &item.raw.precision else {
        let decimal = access.as_ref().is_some_and(|a| a.value == Access::Decimal);
        let arrow_limit = arrow.and_then(|a| a.3);
        if decimal || arrow_limit.is_some() {
            let hint = match arrow_limit {
                Some(limit) => format!("precision = [0, {limit}]"),
                None => "precision = [min, max]".to_string(),
            };
            errors.push(SpecError::new(
                item.at.clone(),
                format!(
                    "type row `{}` needs a precision range, since its carrier does not hold every precision; add {hint}",
                    item.raw.name.get_ref()
                ),
            ));
            return Err(());
        }
        return Ok(None);
    };
    let at = source.location(&precision.span());
    let values: Vec<i64> = precision.get_ref().iter().map(|v| *v.get_ref()).collect();
    let [lo, hi] = values[..] else {
        errors.push(SpecError::new(
            at,
            format!(
                "precision must be two integers [min, max], not {} values; write e.g. precision = [1, 18]",
                values.len()
            ),
        ));
        return Err(());
    };
    let fail = |errors: &mut Vec<SpecError>, message: String| {
        errors.push(SpecError::new(at.clone(), message));
        Err(())
    };
    if let Some(family) = family {
        let (family_min, family_max) = match (family.params, family.max) {
            (ParamKind::Precision, Some(max)) => (0, max as i64),
            (ParamKind::Decimal, Some(max)) => (1, max as i64),
            _ => {
                return fail(
                    errors,
                    format!(
                        "SQL {} has no precision parameter; remove `precision`",
                        family.name
                    ),
                )
            }
        };
        if lo < family_min || hi > family_max {
            return fail(
                errors,
                format!(
                    "precision [{lo}, {hi}] is outside SQL {}'s precisions {family_min} to {family_max}; \
                     keep the range within them",
                    family.name
                ),
            );
        }
    }
    if lo < 0 || hi > MAX_PRECISION {
        return fail(
            errors,
            format!("precision [{lo}, {hi}] is out of range; precisions are 0 to {MAX_PRECISION}"),
        );
    }
    if lo > hi {
        return fail(
            errors,
            format!("precision [{lo}, {hi}] has min > max; write [{hi}, {lo}]"),
        );
    }
    if let Some(limit) = arrow.and_then(|a| a.3) {
        if hi > limit {
            return fail(
                errors,
                format!(
                    "Arrow {} holds at most {limit} fractional digits, so precision max {hi} does not fit; \
                     lower it to {limit} or use another row",
                    arrow.map(|a| a.0).unwrap_or("?")
                ),
            );
        }
    }
    if let (Some(carrier), Some(access)) = (carrier, access) {
        if access.value == Access::Decimal && hi > decimal_digits(carrier.value) {
            return fail(
                errors,
                format!(
                    "carrier `{}` holds at most {} decimal digits, so precision max {hi} does not fit; \
                     lower it or use carrier = \"i128\"",
                    carrier_text(carrier.value),
                    decimal_digits(carrier.value)
                ),
            );
        }
    }
    Ok(Some((lo, hi)))
}

/// Parses an enum spelling; reports unknown spellings with a suggestion.
fn parse_enum<T: Copy>(
    source: &crate::load::Source,
    raw: &toml::Spanned<String>,
    what: &str,
    table: &[(&'static str, T)],
    errors: &mut Vec<SpecError>,
) -> Option<Located<T>> {
    let text = locate(source, raw);
    match table.iter().find(|(s, _)| *s == text.value) {
        Some((_, value)) => Some(Located {
            value: *value,
            at: text.at,
        }),
        None => {
            errors.push(SpecError::new(
                text.at,
                unknown_name(what, &text.value, table.iter().map(|(s, _)| *s)),
            ));
            None
        }
    }
}
