//! SQL types as `specs/types.toml` describes them: its `[[family]]` tables
//! (spellings and parameters) and `[[type]]` rows (precision ranges and
//! Arrow layouts) are generated into [`crate::generated`]; this module
//! parses and prints types against them and maps a type to its row and
//! layout. Nothing here names a SQL family: a new family or row on an
//! existing layout is a spec edit.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

use arrow_schema::{DataType, Field, Fields, TimeUnit};

use crate::error::AggError;
use crate::generated;

/// What the parenthesised parameters of a family mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// No parameters.
    None,
    /// Optional `(p)`, `0 <= p <= max`.
    Precision {
        /// Precision when the spelling has none.
        default: u8,
        /// Largest precision.
        max: u8,
    },
    /// Optional `(p)` or `(p, s)`, `1 <= p <= max`, `0 <= s <= p`.
    Decimal {
        /// Precision when the spelling has none (scale 0).
        default: u8,
        /// Largest precision.
        max: u8,
    },
    /// Optional `(n)`, `1 <= n <= max`.
    Length {
        /// Length when the spelling has none.
        default: u32,
        /// Largest length.
        max: u32,
    },
    /// Any parameters; none changes the carrier, so none is kept.
    Ignored,
    /// `<T>`: a constructor over the other families (`ARRAY<T>`), which
    /// keeps its element type.
    Element,
}

/// One `[[family]]` of `types.toml`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Family {
    /// The family's name, e.g. `TIMESTAMP_LTZ`.
    pub name: &'static str,
    /// Spellings without parameters, e.g. `TIMESTAMP WITH LOCAL TIME ZONE`;
    /// the first is how the runtime prints the type.
    pub spellings: &'static [&'static str],
    /// What its parameters mean.
    pub params: ParamKind,
    /// Spellings that fix the length, e.g. (`STRING`, 2147483647).
    pub aliases: &'static [(&'static str, u32)],
}

/// The Arrow layout of a column: each is one reader and writer in the
/// runtime and in the Java transposes. Variant names are the `arrow`
/// spellings of `types.toml` without parentheses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `Int8`
    Int8,
    /// `Int16`
    Int16,
    /// `Int32`
    Int32,
    /// `Int64`
    Int64,
    /// `Float32`
    Float32,
    /// `Float64`
    Float64,
    /// `Decimal128(p, s)` with the type's precision and scale.
    Decimal128,
    /// `Date32`
    Date32,
    /// `Time32(Millisecond)`
    Time32Millisecond,
    /// `Timestamp(Millisecond, None)`
    TimestampMillisecond,
    /// `Struct{millisecond: Int64, nano_of_millisecond: Int32}`
    StructTimestamp,
    /// `Boolean`
    Boolean,
    /// `Utf8`
    Utf8,
    /// `List`: an `ARRAY<T>` column, a list of `T`'s layout with nullable
    /// items named `item`.
    List,
}

impl Layout {
    /// The `types.toml` spelling, e.g. `Time32(Millisecond)`.
    pub fn spelling(self) -> &'static str {
        match self {
            Layout::Int8 => "Int8",
            Layout::Int16 => "Int16",
            Layout::Int32 => "Int32",
            Layout::Int64 => "Int64",
            Layout::Float32 => "Float32",
            Layout::Float64 => "Float64",
            Layout::Decimal128 => "Decimal128",
            Layout::Date32 => "Date32",
            Layout::Time32Millisecond => "Time32(Millisecond)",
            Layout::TimestampMillisecond => "Timestamp(Millisecond)",
            Layout::StructTimestamp => "Struct(Timestamp)",
            Layout::Boolean => "Boolean",
            Layout::Utf8 => "Utf8",
            Layout::List => "List",
        }
    }

    /// The Arrow type of a column of `sql` in this layout.
    pub fn data_type(self, sql: &SqlType) -> DataType {
        match self {
            Layout::Int8 => DataType::Int8,
            Layout::Int16 => DataType::Int16,
            Layout::Int32 => DataType::Int32,
            Layout::Int64 => DataType::Int64,
            Layout::Float32 => DataType::Float32,
            Layout::Float64 => DataType::Float64,
            Layout::Decimal128 => {
                DataType::Decimal128(sql.precision().unwrap_or(38), sql.scale().unwrap_or(0))
            }
            Layout::Date32 => DataType::Date32,
            Layout::Time32Millisecond => DataType::Time32(TimeUnit::Millisecond),
            Layout::TimestampMillisecond => DataType::Timestamp(TimeUnit::Millisecond, None),
            Layout::StructTimestamp => DataType::Struct(Fields::from(vec![
                Field::new("millisecond", DataType::Int64, false),
                Field::new("nano_of_millisecond", DataType::Int32, false),
            ])),
            Layout::Boolean => DataType::Boolean,
            Layout::Utf8 => DataType::Utf8,
            Layout::List => {
                let item = sql
                    .element()
                    .and_then(|element| element.data_type())
                    .unwrap_or(DataType::Null);
                DataType::List(Arc::new(Field::new(LIST_ITEM, item, true)))
            }
        }
    }
}

/// The name of a `List` column's item field (arrow-rs's default; Java's
/// Arrow names it `$data$`, which readers accept).
pub const LIST_ITEM: &str = "item";

/// The family of `ARRAY<T>` types: the one `[[family]]` of `types.toml`
/// with `params = "element"`.
fn array_family() -> &'static Family {
    families()
        .iter()
        .find(|f| f.params == ParamKind::Element)
        .expect("types.toml declares the ARRAY family (params = \"element\")")
}

/// The one `'static` copy of `ty`, so an `ARRAY<T>` can hold its element
/// type and stay `Copy`. Element types are bounded by the families and
/// their parameters, so the leaked set stays small.
fn intern(ty: SqlType) -> &'static SqlType {
    static INTERNED: OnceLock<Mutex<HashSet<&'static SqlType>>> = OnceLock::new();
    let mut interned = INTERNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = interned.get(&ty) {
        return found;
    }
    let leaked: &'static SqlType = Box::leak(Box::new(ty));
    interned.insert(leaked);
    leaked
}

/// One `[[type]]` row of `types.toml`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TypeRowInfo {
    /// The row's name, e.g. `TIMESTAMP_9`.
    pub name: &'static str,
    /// The family it matches.
    pub family: &'static str,
    /// The precision range it covers, for parametric families.
    pub precision: Option<(u8, u8)>,
    /// The Arrow layout of its columns.
    pub layout: Layout,
}

impl TypeRowInfo {
    /// A SQL type this row covers, at its largest precision (DECIMAL with
    /// scale 2 up to 18 digits, else 4; length families with length 4):
    /// what tests and tools use when they need one type of a row.
    pub fn example(&self) -> SqlType {
        let family = families()
            .iter()
            .find(|f| f.name == self.family)
            .expect("type rows name declared families (checked when the specs are built)");
        let high = self.precision.map(|(_, high)| high);
        let (precision, scale, length) = match family.params {
            ParamKind::Decimal { default, .. } => {
                let p = high.unwrap_or(default);
                (Some(p), Some(if p <= 18 { 2 } else { 4 }), None)
            }
            ParamKind::Precision { default, .. } => (Some(high.unwrap_or(default)), None, None),
            ParamKind::Length { .. } => (None, None, Some(4)),
            ParamKind::None | ParamKind::Ignored => (None, None, None),
            ParamKind::Element => {
                let element = type_rows()
                    .iter()
                    .find(|row| row.family != self.family)
                    .expect("types.toml has rows besides ARRAY")
                    .example();
                return SqlType::array_of(element);
            }
        };
        SqlType {
            family,
            precision,
            scale,
            length,
            element: None,
        }
    }
}

/// Every `[[family]]` of `types.toml`.
pub fn families() -> &'static [Family] {
    generated::FAMILIES
}

/// Every `[[type]]` row of `types.toml`.
pub fn type_rows() -> &'static [TypeRowInfo] {
    generated::TYPE_ROWS
}

/// A Flink SQL logical type: a family of `types.toml` with the parameters
/// its kind keeps (precision and scale, or length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlType {
    family: &'static Family,
    precision: Option<u8>,
    scale: Option<i8>,
    length: Option<u32>,
    /// The element type of an `ARRAY<T>`.
    element: Option<&'static SqlType>,
}

impl SqlType {
    /// The type Flink spells `text`; panics when it is none (for constants
    /// in tests, benches and examples; plans use [`str::parse`]).
    #[track_caller]
    pub fn of(text: &str) -> SqlType {
        match text.parse() {
            Ok(ty) => ty,
            Err(e) => panic!("{e}"),
        }
    }

    /// The family name, as type rows name it in `sql = ...`.
    pub fn family(&self) -> &'static str {
        self.family.name
    }

    /// The precision (DECIMAL, and families with a precision parameter).
    pub fn precision(&self) -> Option<u8> {
        self.precision
    }

    /// The decimal scale, for decimal families.
    pub fn scale(&self) -> Option<i8> {
        self.scale
    }

    /// The length, for families with a length parameter.
    pub fn length(&self) -> Option<u32> {
        self.length
    }

    /// `ARRAY<element>`.
    pub fn array_of(element: SqlType) -> SqlType {
        SqlType {
            family: array_family(),
            precision: None,
            scale: None,
            length: None,
            element: Some(intern(element)),
        }
    }

    /// The element type of an `ARRAY<T>`, `None` for other types.
    pub fn element(&self) -> Option<SqlType> {
        self.element.copied()
    }

    /// The `types.toml` row this type falls in: the first row whose family
    /// matches and whose precision range (if any) holds it; an `ARRAY<T>`
    /// only when a row other than ARRAY's own covers `T` (no nesting).
    pub fn type_row(&self) -> Option<&'static TypeRowInfo> {
        if let Some(element) = self.element {
            if element.element.is_some() || element.type_row().is_none() {
                return None;
            }
        }
        type_rows().iter().find(|row| {
            row.family == self.family.name
                && row.precision.is_none_or(|(low, high)| {
                    self.precision.is_some_and(|p| (low..=high).contains(&p))
                })
        })
    }

    /// The Arrow layout of this type's columns, if a type row covers it
    /// (for `ARRAY<T>`: `List` when a type row covers `T`).
    pub fn layout(&self) -> Option<Layout> {
        self.type_row().map(|row| row.layout)
    }

    /// The Arrow type of this type's columns, if a type row covers it.
    pub fn data_type(&self) -> Option<DataType> {
        self.layout().map(|layout| layout.data_type(self))
    }
}

impl fmt::Display for SqlType {
    /// The family's first spelling with the kept parameters (or the alias
    /// that fixes the length), which [`SqlType::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(element) = self.element {
            return write!(f, "ARRAY<{element}>");
        }
        let name = self.family.spellings[0];
        if let Some(length) = self.length {
            if let Some((alias, _)) = self.family.aliases.iter().find(|(_, n)| *n == length) {
                return f.write_str(alias);
            }
            return write!(f, "{name}({length})");
        }
        match (self.precision, self.scale) {
            (Some(p), Some(s)) => write!(f, "{name}({p}, {s})"),
            (Some(p), None) => write!(f, "{name}({p})"),
            _ => f.write_str(name),
        }
    }
}

/// `text` split into its words without parameters (upper case, single
/// spaces) and the integers of its parenthesised parameters, in order:
/// `TIMESTAMP(3) WITH LOCAL TIME ZONE` -> (`TIMESTAMP WITH LOCAL TIME ZONE`,
/// [3]). `None` for unbalanced parentheses or a non-integer parameter.
fn split_spelling(text: &str) -> Option<(String, Vec<i64>)> {
    let mut words = String::new();
    let mut params = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        words.push_str(&rest[..open]);
        words.push(' ');
        let close = rest[open..].find(')')? + open;
        for param in rest[open + 1..close].split(',') {
            params.push(param.trim().parse().ok()?);
        }
        rest = &rest[close + 1..];
    }
    if rest.contains(')') {
        return None;
    }
    words.push_str(rest);
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    Some((words.to_ascii_uppercase(), params))
}

/// The element spelling of `ARRAY<T>` (any case, `T` without a trailing
/// `NOT NULL`: an element's nullability changes neither its Arrow layout
/// nor Flink's BinaryArrayData bytes), or `None` for other spellings.
fn array_element(text: &str) -> Option<&str> {
    let text = text.trim();
    let open = text.find('<')?;
    if !text[..open].trim().eq_ignore_ascii_case("ARRAY") || !text.ends_with('>') {
        return None;
    }
    let inner = text[open + 1..text.len() - 1].trim();
    let upper = inner.to_ascii_uppercase();
    Some(match upper.strip_suffix("NOT NULL") {
        Some(rest) if rest.ends_with(char::is_whitespace) => inner[..rest.len()].trim_end(),
        _ => inner,
    })
}

impl FromStr for SqlType {
    type Err = AggError;

    /// Parses Flink's spelling (`INT`, `DECIMAL(20, 3)`, `TIMESTAMP(9)`,
    /// `TIMESTAMP(3) WITH LOCAL TIME ZONE`, `STRING`, ...) against the
    /// families of `types.toml`, with their defaults.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || AggError::Plan(format!("unknown SQL type '{text}'"));
        if let Some(element) = array_element(text) {
            return Ok(SqlType::array_of(element.parse().map_err(|_| bad())?));
        }
        let (words, params) = split_spelling(text).ok_or_else(bad)?;
        let mut ty = SqlType {
            family: &families()[0],
            precision: None,
            scale: None,
            length: None,
            element: None,
        };
        for family in families() {
            if family.params == ParamKind::Element {
                continue;
            }
            if let Some((_, length)) = family.aliases.iter().find(|(a, _)| *a == words) {
                if !params.is_empty() {
                    return Err(bad());
                }
                ty.family = family;
                ty.length = Some(*length);
                return Ok(ty);
            }
        }
        let family = families()
            .iter()
            .find(|f| f.params != ParamKind::Element && f.spellings.contains(&words.as_str()))
            .ok_or_else(bad)?;
        ty.family = family;
        match (family.params, params.as_slice()) {
            (ParamKind::None, []) | (ParamKind::Ignored, _) => {}
            (ParamKind::Element, _) => return Err(bad()),
            (ParamKind::Precision { default, .. }, []) => ty.precision = Some(default),
            (ParamKind::Precision { max, .. }, [p]) if (0..=max as i64).contains(p) => {
                ty.precision = Some(*p as u8)
            }
            (ParamKind::Decimal { default, max }, decimal) if decimal.len() <= 2 => {
                let precision = decimal.first().copied().unwrap_or(default as i64);
                let scale = decimal.get(1).copied().unwrap_or(0);
                if !(1..=max as i64).contains(&precision) || !(0..=precision).contains(&scale) {
                    return Err(bad());
                }
                ty.precision = Some(precision as u8);
                ty.scale = Some(scale as i8);
            }
            (ParamKind::Length { default, .. }, []) => ty.length = Some(default),
            // Length 0 is Flink's type of an empty string literal ('' is CHAR(0)).
            (ParamKind::Length { max, .. }, [n]) if (0..=max as i64).contains(n) => {
                ty.length = Some(*n as u32)
            }
            _ => return Err(bad()),
        }
        Ok(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flink_spellings() {
        let int = SqlType::of("int");
        assert_eq!(int.family(), "INT");
        assert_eq!(SqlType::of("INTEGER"), int);
        let decimal = SqlType::of("DECIMAL(20, 3)");
        assert_eq!((decimal.precision(), decimal.scale()), (Some(20), Some(3)));
        assert_eq!(decimal.to_string(), "DECIMAL(20, 3)");
        assert_eq!(SqlType::of("DECIMAL").to_string(), "DECIMAL(10, 0)");
        assert_eq!(SqlType::of("TIMESTAMP").precision(), Some(6));
        assert_eq!(SqlType::of("TIMESTAMP(3)").to_string(), "TIMESTAMP(3)");
        assert_eq!(SqlType::of("STRING").to_string(), "STRING");
        assert_eq!(SqlType::of("VARCHAR(2147483647)").to_string(), "STRING");
        assert_eq!(SqlType::of("VARCHAR(10)").length(), Some(10));
        for family in families().iter().filter(|f| f.params != ParamKind::Element) {
            let ty: SqlType = family.spellings[0].parse().unwrap();
            assert_eq!(
                ty.to_string().parse::<SqlType>().unwrap(),
                ty,
                "{}",
                family.name
            );
        }
        assert!("DECIMAL(40,2)".parse::<SqlType>().is_err());
        assert!("DECIMAL(4,5)".parse::<SqlType>().is_err());
        assert!("INT(3)".parse::<SqlType>().is_err());
        assert!("TIMESTAMP(10)".parse::<SqlType>().is_err());
        assert!("INTT".parse::<SqlType>().is_err());
        assert!("DECIMAL(3".parse::<SqlType>().is_err());
    }

    #[test]
    fn words_and_parameters_split_wherever_the_parameters_are() {
        assert_eq!(
            split_spelling("timestamp(3)  with local time zone"),
            Some(("TIMESTAMP WITH LOCAL TIME ZONE".to_string(), vec![3]))
        );
        assert_eq!(
            split_spelling("INTERVAL DAY(2) TO SECOND(3)"),
            Some(("INTERVAL DAY TO SECOND".to_string(), vec![2, 3]))
        );
        assert_eq!(split_spelling("DECIMAL(x)"), None);
    }

    #[test]
    fn arrays_parse_print_and_map_to_lists_of_their_element() {
        let ints = SqlType::of("ARRAY<INT NOT NULL>");
        assert_eq!(ints.family(), "ARRAY");
        assert_eq!(ints.element(), Some(SqlType::of("INT")));
        assert_eq!(ints, SqlType::of("array<int>"));
        assert_eq!(ints.to_string(), "ARRAY<INT>");
        assert_eq!(ints.layout(), Some(Layout::List));
        assert_eq!(ints.type_row().map(|row| row.name), Some("ARRAY"));
        let nested = SqlType::array_of(ints);
        assert_eq!((nested.type_row(), nested.layout()), (None, None));
        assert_eq!(
            ints.data_type(),
            Some(DataType::List(Arc::new(Field::new(
                "item",
                DataType::Int32,
                true
            ))))
        );
        let decimals = SqlType::of("ARRAY<DECIMAL(20, 3)>");
        assert_eq!(decimals.to_string().parse::<SqlType>().unwrap(), decimals);
        assert_eq!(
            SqlType::of("ARRAY<TIMESTAMP(9) NOT NULL>").element(),
            Some(SqlType::of("TIMESTAMP(9)"))
        );
        // Nested arrays and elements no row covers parse but have no layout.
        assert_eq!(SqlType::of("ARRAY<ARRAY<INT>>").layout(), None);
        assert_eq!(SqlType::of("ARRAY<TIME(6)>").layout(), None);
        assert_eq!(SqlType::of("INT").element(), None);
        assert!("ARRAY<INTT>".parse::<SqlType>().is_err());
        assert!("ARRAY<INT".parse::<SqlType>().is_err());
        assert!("MAP<INT, INT>".parse::<SqlType>().is_err());
    }

    #[test]
    fn every_type_row_names_a_family_and_maps_to_its_layout() {
        for row in type_rows() {
            let family = families().iter().find(|f| f.name == row.family);
            assert!(family.is_some(), "row {} names no family", row.name);
        }
        let ts9 = SqlType::of("TIMESTAMP(9)");
        assert_eq!(ts9.type_row().map(|r| r.name), Some("TIMESTAMP_9"));
        assert_eq!(ts9.layout(), Some(Layout::StructTimestamp));
        assert_eq!(
            SqlType::of("DECIMAL(20, 3)").data_type(),
            Some(DataType::Decimal128(20, 3))
        );
        assert_eq!(SqlType::of("TIME(6)").layout(), None);
        for row in type_rows() {
            assert_eq!(row.example().type_row(), Some(row), "{}", row.name);
        }
    }
}
