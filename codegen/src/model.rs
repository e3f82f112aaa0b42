//! The intermediate model: what the spec files say, resolved and
//! validated. Every emitter (Rust today, Cranelift later) renders from this
//! model, never from raw TOML.

use std::fmt;
use std::path::PathBuf;

/// Where a spec item was written, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Spec file path as given to the loader (e.g. `specs/extreme.toml`).
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Rust carrier of one value of a type row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Carrier {
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `i128`
    I128,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `bool`
    Bool,
    /// Epoch milliseconds plus nano-of-millisecond (runtime `Timestamp`).
    Timestamp,
    /// Borrowed UTF-8 bytes.
    Bytes,
}

/// How a type row's values are read from and written to Arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// `PrimitiveArray` values slice plus validity bitmap.
    Primitive,
    /// `BooleanArray` bits.
    Boolean,
    /// `Decimal128Array`, narrowed to the carrier.
    Decimal,
    /// `Struct{millisecond: Int64, nano_of_millisecond: Int32}`.
    Timestamp,
    /// `StringArray`, values borrowed as bytes.
    Utf8,
    /// `ListArray`, each value carried as its `arrow-row` bytes.
    List,
}

/// MIN/MAX comparison rule, as Flink's generated code compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// Java primitive `<`/`>`: NaN never replaces nor is replaced; ties keep the first.
    Primitive,
    /// Total order of a signed integer carrier.
    Signed,
    /// `false < true`.
    Boolean,
    /// Unsigned lexicographic bytes.
    Bytes,
    /// Milliseconds, then nano-of-millisecond.
    Timestamp,
    /// No MIN/MAX order: the row's values only compare for equality.
    None,
}

/// Result equality used to suppress unchanged results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Equality {
    /// Java `==` on the carrier (NaN != NaN, -0.0 == 0.0).
    Primitive,
    /// Value equality.
    Exact,
}

/// Arithmetic class of a type row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Numeric {
    /// Two's-complement integers.
    Integer,
    /// IEEE floating point.
    Float,
    /// Scaled decimals.
    Decimal,
    /// No arithmetic (temporal, boolean, string).
    None,
}

/// What the parenthesised parameters of a SQL family mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// No parameters.
    None,
    /// Optional `(p)`: fractional-second precision.
    Precision,
    /// Optional `(p)` or `(p, s)`: decimal precision and scale.
    Decimal,
    /// Optional `(n)`: a length.
    Length,
    /// Any parameters, none of which changes the carrier.
    Ignored,
    /// `<T>`: a type constructor over the other families (`ARRAY<T>`).
    Element,
}

/// One `[[family]]` table of `types.toml`: a SQL type family as Flink
/// spells it.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Name type rows match with `sql = ...`, e.g. `TIMESTAMP_LTZ`.
    pub name: String,
    /// Flink's internal value class (`int`, `timestamp`, ...), which fixes
    /// the Arrow layouts that can carry it.
    pub internal: String,
    /// Spellings without parameters, e.g. `TIMESTAMP WITH LOCAL TIME ZONE`.
    pub spellings: Vec<String>,
    /// What its parameters mean.
    pub params: ParamKind,
    /// Default precision or length.
    pub default: Option<u32>,
    /// Largest precision or length.
    pub max: Option<u32>,
    /// Spellings that fix the length, e.g. (`STRING`, 2147483647).
    pub aliases: Vec<(String, u32)>,
    /// Where the table starts.
    pub location: Location,
}

/// One `[[type]]` row of `types.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeRow {
    /// Name spec entries use, e.g. `DECIMAL_18`.
    pub name: String,
    /// SQL family it matches, e.g. `DECIMAL`.
    pub sql: String,
    /// Inclusive precision range, for parametric types.
    pub precision: Option<(u8, u8)>,
    /// Arrow type spelling, e.g. `Time32(Millisecond)`.
    pub arrow: String,
    /// Rust carrier.
    pub carrier: Carrier,
    /// Arrow access pattern.
    pub access: Access,
    /// MIN/MAX order.
    pub order: Order,
    /// Result equality.
    pub equality: Equality,
    /// Arithmetic class.
    pub numeric: Numeric,
    /// Where the row starts.
    pub location: Location,
}

/// An aggregate function a spec entry can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Function {
    /// MIN(x)
    Min,
    /// MAX(x)
    Max,
    /// COUNT(*)
    CountStar,
    /// COUNT(x)
    Count,
    /// SUM(x)
    Sum,
    /// $SUM0(x)
    Sum0,
    /// AVG(x)
    Avg,
    /// FIRST_VALUE(x)
    FirstValue,
    /// LAST_VALUE(x)
    LastValue,
    /// LISTAGG(x [, separator])
    ListAgg,
    /// SINGLE_VALUE(x): a scalar subquery's one value
    SingleValue,
}

impl Function {
    /// Every function, in listing order.
    pub const ALL: [Function; 11] = [
        Function::Min,
        Function::Max,
        Function::CountStar,
        Function::Count,
        Function::Sum,
        Function::Sum0,
        Function::Avg,
        Function::FirstValue,
        Function::LastValue,
        Function::ListAgg,
        Function::SingleValue,
    ];

    /// Spec spelling: `MIN`, `MAX`, `COUNT_STAR`, `COUNT`, `SUM`, `SUM0`, `AVG`,
    /// `FIRST_VALUE`, `LAST_VALUE`, `LISTAGG`, `SINGLE_VALUE`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Function::Min => "MIN",
            Function::Max => "MAX",
            Function::CountStar => "COUNT_STAR",
            Function::Count => "COUNT",
            Function::Sum => "SUM",
            Function::Sum0 => "SUM0",
            Function::Avg => "AVG",
            Function::FirstValue => "FIRST_VALUE",
            Function::LastValue => "LAST_VALUE",
            Function::ListAgg => "LISTAGG",
            Function::SingleValue => "SINGLE_VALUE",
        }
    }

    /// Parses the spec spelling (case-insensitive).
    pub fn parse(text: &str) -> Option<Function> {
        Function::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(text))
    }

    /// Number of typed arguments (0 for COUNT(*)): the type rows of a spec
    /// entry are this argument's.
    pub fn arity(&self) -> usize {
        match self {
            Function::CountStar => 0,
            _ => 1,
        }
    }

    /// Most arguments a call may pass: the typed ones plus optional
    /// trailing character-string arguments (LISTAGG's separator literal).
    pub fn max_args(&self) -> usize {
        match self {
            Function::ListAgg => 2,
            other => other.arity(),
        }
    }
}

/// A state template: the shape of per-group state and its kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateTemplate {
    /// One running extreme per group (insert-only MIN/MAX).
    RunningExtreme,
    /// One BIGINT count of rows.
    CountStar,
    /// One BIGINT count of non-NULL values.
    Count,
    /// Nullable running sum.
    Sum,
    /// Running sum starting at zero.
    Sum0,
    /// Sum plus count.
    Avg,
    /// Nullable sum plus a count of values, NULL when the count is zero
    /// (SUM over retracting input, Flink's SumWithRetractAggFunction).
    SumRetract,
    /// A counted multiset of values plus the extreme (MIN/MAX over
    /// retracting input, Flink's MinWithRetractAggFunction).
    CountedExtreme,
    /// The first or last non-NULL value (insert-only FIRST_VALUE and
    /// LAST_VALUE).
    FirstLast,
    /// The live values in arrival order (FIRST_VALUE and LAST_VALUE over
    /// retracting input).
    FirstLastRetract,
    /// One growing concatenation and its latest separator (insert-only
    /// LISTAGG, Flink's declarative ListAggFunction).
    ListAgg,
    /// The live values in arrival order and the latest separator (LISTAGG
    /// over retracting input).
    ListAggRetract,
    /// The value and a count of rows; a second value fails the query
    /// (SINGLE_VALUE).
    SingleValue,
}

impl StateTemplate {
    /// Every template.
    pub const ALL: [StateTemplate; 13] = [
        StateTemplate::RunningExtreme,
        StateTemplate::CountStar,
        StateTemplate::Count,
        StateTemplate::Sum,
        StateTemplate::Sum0,
        StateTemplate::Avg,
        StateTemplate::SumRetract,
        StateTemplate::CountedExtreme,
        StateTemplate::FirstLast,
        StateTemplate::FirstLastRetract,
        StateTemplate::ListAgg,
        StateTemplate::ListAggRetract,
        StateTemplate::SingleValue,
    ];

    /// Spec spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            StateTemplate::RunningExtreme => "running_extreme",
            StateTemplate::CountStar => "count_star",
            StateTemplate::Count => "count",
            StateTemplate::Sum => "sum",
            StateTemplate::Sum0 => "sum0",
            StateTemplate::Avg => "avg",
            StateTemplate::SumRetract => "sum_retract",
            StateTemplate::CountedExtreme => "counted_extreme",
            StateTemplate::FirstLast => "first_last",
            StateTemplate::FirstLastRetract => "first_last_retract",
            StateTemplate::ListAgg => "listagg",
            StateTemplate::ListAggRetract => "listagg_retract",
            StateTemplate::SingleValue => "single_value",
        }
    }

    /// Parses the spec spelling.
    pub fn parse(text: &str) -> Option<StateTemplate> {
        StateTemplate::ALL.into_iter().find(|t| t.as_str() == text)
    }
}

pub use aggforge_common::{InputMode, Phase};

/// The scale part of a `DECIMAL(p, s)` type expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScaleExpr {
    /// `s`: the argument's scale.
    Arg,
    /// A fixed scale.
    Fixed(u8),
    /// `max(n, s)`.
    AtLeast(u8),
}

/// A type expression in `partial` and `result`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeExpr {
    /// `arg`: the argument's own type.
    Arg,
    /// A `types.toml` row by name, e.g. `BIGINT`.
    Named(String),
    /// `DECIMAL(p, s)` with `s` possibly derived from the argument.
    Decimal {
        /// Result precision.
        precision: u8,
        /// Result scale rule.
        scale: ScaleExpr,
    },
    /// `accumulator`: Flink's structured accumulator of an imperative
    /// function as one struct column, whose fields the template's state
    /// kernel gives (MIN/MAX over retractions: the extreme, `mapSize` and
    /// the MapView of counts). Only in `partial`.
    Accumulator,
}

/// One field of a partial (two-phase) layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialField {
    /// Flink's accumulator field name.
    pub name: String,
    /// Its type.
    pub ty: TypeExpr,
}

/// What SUM does when the sum leaves the carrier's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Two's-complement wrap in the input type.
    Wrap,
    /// IEEE arithmetic.
    Ieee,
    /// DECIMAL: the sum becomes NULL past 38 digits.
    Null,
}

/// How AVG divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Division {
    /// Integer division truncating toward zero.
    Truncate,
    /// Floating-point division.
    Float,
    /// Decimal division rounded HALF_UP to the result scale.
    HalfUp,
}

/// Template parameters of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Params {
    /// SUM/SUM0 overflow rule.
    pub overflow: Option<Overflow>,
    /// AVG division rule.
    pub division: Option<Division>,
}

/// What a state template keeps and returns for one numeric class of
/// argument, as its declaration says.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Two-phase layout, in Flink's field order (empty: single phase only).
    pub partial: Vec<PartialField>,
    /// Result type.
    pub result: TypeExpr,
    /// Template parameters.
    pub params: Params,
}

/// A state template's declaration (the ```` ```toml ```` block of
/// `runtime/src/templates/NAME.rs`): what it serves and, per numeric
/// class, its [`Shape`].
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// The template.
    pub template: StateTemplate,
    /// Functions it serves.
    pub functions: Vec<Function>,
    /// Input modes it serves.
    pub inputs: Vec<InputMode>,
    /// Why it does not serve the other input mode, if it does not.
    pub input_reason: Option<String>,
    /// Whether it serves the DISTINCT variant itself.
    pub distinct: bool,
    /// Whether it also serves DISTINCT calls under the DISTINCT view
    /// (`runtime/src/templates/distinct.rs`, single phase).
    pub distinct_view: bool,
    /// Phases it supports.
    pub phases: Vec<Phase>,
    /// Why it does not support the other phases, if it does not.
    pub phases_reason: Option<String>,
    /// Numeric classes of the argument's type row it accepts.
    pub numeric: Vec<Numeric>,
    /// The shape per accepted class (`None`: no argument, COUNT(*)).
    pub shapes: Vec<(Option<Numeric>, Shape)>,
    /// Where the declaration starts (its marker line).
    pub location: Location,
}

impl Declaration {
    /// The shape for an argument of numeric class `numeric` (`None` for
    /// no argument).
    pub fn shape(&self, numeric: Option<Numeric>) -> Option<&Shape> {
        self.shapes
            .iter()
            .find(|(class, _)| *class == numeric)
            .map(|(_, shape)| shape)
    }

    /// Whether it serves `function` over `input` (DISTINCT or not).
    pub fn serves(&self, function: Function, input: InputMode, distinct: bool) -> bool {
        self.functions.contains(&function)
            && self.inputs.contains(&input)
            && if distinct {
                self.distinct || self.distinct_view
            } else {
                !self.distinct
            }
    }

    /// Whether a DISTINCT entry with this template runs under the DISTINCT
    /// view (the template itself keeps no set of values).
    pub fn under_view(&self, distinct: bool) -> bool {
        distinct && !self.distinct
    }
}

/// One `[[entry]]` of a family file: what varies per entry. The partial
/// layout, result type and parameters are the template's
/// ([`Declaration`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Functions the entry specializes.
    pub functions: Vec<Function>,
    /// Input mode.
    pub input: InputMode,
    /// DISTINCT variant.
    pub distinct: bool,
    /// State template, chosen by the declarations from the functions,
    /// input mode and DISTINCT.
    pub state: StateTemplate,
    /// Supported phases.
    pub phases: Vec<Phase>,
    /// Type row names (empty for COUNT(*)).
    pub types: Vec<String>,
    /// Where the entry starts.
    pub location: Location,
}

/// All validated specs.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecSet {
    /// Families of `types.toml`, in file order.
    pub families: Vec<Family>,
    /// Rows of `types.toml`, in file order.
    pub types: Vec<TypeRow>,
    /// Declarations of the state templates, in file-name order.
    pub templates: Vec<Declaration>,
    /// Entries of every family file, files in name order.
    pub entries: Vec<Entry>,
}

/// One monomorphized accumulator: a function over one type row (none for
/// COUNT(*)) as one entry declares it.
#[derive(Debug, Clone, Copy)]
pub struct Specialization<'a> {
    /// The function.
    pub function: Function,
    /// The argument's type row.
    pub ty: Option<&'a TypeRow>,
    /// The declaring entry.
    pub entry: &'a Entry,
    /// The declaration of the entry's state template.
    pub template: &'a Declaration,
}

impl SpecSet {
    /// A type row by name.
    pub fn type_row(&self, name: &str) -> Option<&TypeRow> {
        self.types.iter().find(|t| t.name == name)
    }

    /// The declaration of a state template.
    pub fn template(&self, template: StateTemplate) -> Option<&Declaration> {
        self.templates.iter().find(|d| d.template == template)
    }

    /// Every specialization, in entry order (entries whose template has no
    /// declaration, which validation rules out, are left out).
    pub fn specializations(&self) -> Vec<Specialization<'_>> {
        let mut out = Vec::new();
        for entry in &self.entries {
            let Some(template) = self.template(entry.state) else {
                continue;
            };
            for &function in &entry.functions {
                if entry.types.is_empty() {
                    out.push(Specialization {
                        function,
                        ty: None,
                        entry,
                        template,
                    });
                }
                for name in &entry.types {
                    if let Some(ty) = self.type_row(name) {
                        out.push(Specialization {
                            function,
                            ty: Some(ty),
                            entry,
                            template,
                        });
                    }
                }
            }
        }
        out
    }
}

impl<'a> Specialization<'a> {
    /// The template's partial layout, result type and parameters for this
    /// argument's numeric class; `None` if the declaration has none for it.
    pub fn shape(&self) -> Option<&'a Shape> {
        self.template.shape(self.ty.map(|row| row.numeric))
    }

    /// Rust identifier of the generated type alias, e.g. `MinInt`,
    /// `SumDecimal18`, `CountStar`; `Distinct`/`Retract` suffixes mark
    /// those variants.
    pub fn ident(&self) -> String {
        let mut name = camel(self.function.as_str());
        if let Some(ty) = self.ty {
            name.push_str(&camel(&ty.name));
        }
        if self.entry.distinct {
            name.push_str("Distinct");
        }
        if self.entry.input == InputMode::Retracting {
            name.push_str("Retract");
        }
        name
    }

    /// Display name, e.g. `MIN<INT>/insert_only`.
    pub fn display_name(&self) -> String {
        let ty = self.ty.map(|t| t.name.as_str()).unwrap_or("*");
        let distinct = if self.entry.distinct { " DISTINCT" } else { "" };
        format!(
            "{}{distinct}<{ty}>/{}",
            self.function.as_str(),
            self.entry.input.as_str()
        )
    }
}

/// `DECIMAL_18` -> `Decimal18`, `COUNT_STAR` -> `CountStar`.
fn camel(text: &str) -> String {
    text.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let lower = part.to_ascii_lowercase();
            let mut chars = lower.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}
