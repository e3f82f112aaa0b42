//! The proptest strategies of `reference_model.rs`.
//!
//! A [`Case`] is a group count and one to four batches of up to 39 rows;
//! a row is a group key, the argument value (NULL one time in eight), a
//! FILTER bit (a third of the batches have a FILTER column) and, for
//! retracting specializations, a row kind; each batch says whether the
//! local/global run hands the local partials to the global accumulator
//! after it (always after the last batch). Every part is a strategy of its
//! own, so a failure shrinks to few batches and rows, group 0, no FILTER,
//! `+I`, and values toward 0, `""` and `false`. A value is drawn from
//! plain values, the type's edge values (NaN, -0.0, the infinities, an
//! integer carrier's MIN/MAX, 18- and 38-digit DECIMALs, nanoseconds of
//! TIMESTAMP(9), long strings) or anything in range, by a weighted
//! [`branch`] that shrinks toward the plain values, so shrinking leaves an
//! edge value only when the failure needs it.
//!
//! Row kinds are drawn independently of each other, as the seeded
//! generator this replaces drew them: a `-U`/`-D` may retract a value its
//! group never received, and the model follows Flink's accumulators there
//! (counts go negative, SUM starts from `0 - x`) instead of rejecting it.

use std::fmt;

use aggforge_runtime::types::{Layout, SqlType};
use proptest::prelude::*;
use proptest::sample::select;

use super::model::V;

/// Most groups of a case (keys are `0..groups`).
const MAX_GROUPS: u32 = 6;
/// Most batches of a case.
const MAX_BATCHES: usize = 4;
/// Rows per batch: `0..MAX_ROWS`.
const MAX_ROWS: usize = 40;
/// Raw group keys are drawn below this multiple of every group count
/// `1..=MAX_GROUPS` and reduced modulo the case's count, so keys stay
/// uniform whatever the count shrinks to.
const RAW_KEYS: u32 = 60;

/// One input batch.
pub struct Batch {
    pub values: Vec<Option<V>>,
    pub groups: Vec<u32>,
    /// The FILTER column, if the batch has one.
    pub filter: Option<Vec<Option<bool>>>,
    /// Row kinds (retracting specializations only): 0 `+I`, 1 `-U`,
    /// 2 `+U`, 3 `-D`.
    pub kinds: Option<Vec<i8>>,
    /// The local/global run merges its local partials after this batch.
    pub flush: bool,
}

impl Batch {
    /// Row `i` passes the FILTER (a NULL bit does not).
    pub fn counts(&self, i: usize) -> bool {
        self.filter.as_ref().is_none_or(|f| f[i] == Some(true))
    }

    /// Row `i` is a `-U` or `-D`.
    pub fn retracts(&self, i: usize) -> bool {
        self.kinds.as_ref().is_some_and(|k| k[i] & 1 == 1)
    }
}

/// One generated input of a specialization.
pub struct Case {
    /// Groups `0..groups` (some may get no rows).
    pub groups: u32,
    pub batches: Vec<Batch>,
    /// The call has an argument (not COUNT(*)); only for printing.
    arg: bool,
}

/// A case for a specialization over `ty` (`None`: COUNT(*)).
///
pub fn case(ty: Option<SqlType>, retracting: bool) -> BoxedStrategy<Case> {
    let Some(ty) = ty else {
        // COUNT(*) reads no argument; the value is never used.
        return rows_of(Just(Some(V::B(true))), false, retracting);
    };
    nullable(values(ty), retracting)
}

/// The non-NULL values of an argument of `ty`.
fn values(ty: SqlType) -> BoxedStrategy<V> {
    match ty.layout().expect("a type with a types.toml row") {
        Layout::Int8 => integer(i8::MIN.into(), i8::MAX.into()).boxed(),
        Layout::Int16 => integer(i16::MIN.into(), i16::MAX.into()).boxed(),
        Layout::Int32 | Layout::Date32 | Layout::Time32Millisecond => {
            integer(i32::MIN.into(), i32::MAX.into()).boxed()
        }
        Layout::Int64 | Layout::TimestampMillisecond => integer(i64::MIN, i64::MAX).boxed(),
        Layout::Decimal128 => decimal(ty.precision().unwrap()).boxed(),
        Layout::Float32 => (plain_or_edge(
            &[1, 1],
            (-1000i32..=1000).prop_map(|k| k as f32 / 8.0),
            F32_EDGES,
        )
        .prop_map(V::F32))
        .boxed(),
        Layout::Float64 => (plain_or_edge(
            &[1, 1],
            (-1000i32..=1000).prop_map(|k| f64::from(k) / 3.0),
            F64_EDGES,
        )
        .prop_map(V::F64))
        .boxed(),
        Layout::Boolean => any::<bool>().prop_map(V::B).boxed(),
        // CHAR gets short strings, other UTF-8 rows short and long ones.
        Layout::Utf8 if ty.family() == "CHAR" => short_string(4).prop_map(V::S).boxed(),
        Layout::Utf8 => ((branch(&[4, 1]), short_string(3), long_string())
            .prop_map(|(i, short, long)| V::S(if i == 0 { short } else { long })))
        .boxed(),
        Layout::StructTimestamp => timestamp().boxed(),
        // ARRAY<T>: up to three elements of T's values, one in five NULL.
        Layout::List => {
            let element = ty.element().expect("a List type is an ARRAY");
            prop::collection::vec(prop::option::weighted(0.8, values(element)), 0..4)
                .prop_map(V::L)
                .boxed()
        }
    }
}

/// Cases of an argument of `value`s, NULL one time in eight (shrinking
/// moves toward the non-NULL value).
fn nullable(value: impl Strategy<Value = V> + 'static, retracting: bool) -> BoxedStrategy<Case> {
    let value = (0..8u8, value).prop_map(|(n, v)| (n < 7).then_some(v));
    rows_of(value, true, retracting)
}

/// Cases whose rows take their argument from `value`.
fn rows_of(
    value: impl Strategy<Value = Option<V>> + 'static,
    arg: bool,
    retracting: bool,
) -> BoxedStrategy<Case> {
    // +I mostly, then +U, -U, -D; shrinks toward +I.
    let kinds: &'static [i8] = if retracting {
        &[0, 0, 0, 2, 1, 3]
    } else {
        &[0]
    };
    // FILTER bits: mostly true, then false, then NULL.
    let filter_bits: &'static [Option<bool>] = &[
        Some(true),
        Some(true),
        Some(true),
        Some(true),
        Some(true),
        Some(false),
        Some(false),
        None,
    ];
    let row = (0..RAW_KEYS, value, select(filter_bits), select(kinds));
    // Tuples shrink field by field, so rows and batches come first: the
    // FILTER column, the split points and the group count simplify once
    // the rows are few.
    let batch = (
        prop::collection::vec(row, 0..MAX_ROWS),
        prop::bool::weighted(1.0 / 3.0),
        any::<bool>(),
    );
    (
        prop::collection::vec(batch, 1..=MAX_BATCHES),
        1..=MAX_GROUPS,
    )
        .prop_map(move |(batches, groups)| {
            let last = batches.len() - 1;
            let batches = batches
                .into_iter()
                .enumerate()
                .map(|(b, (rows, filtered, flush))| Batch {
                    groups: rows.iter().map(|r| r.0 % groups).collect(),
                    values: rows.iter().map(|r| r.1.clone()).collect(),
                    filter: filtered.then(|| rows.iter().map(|r| r.2).collect()),
                    kinds: retracting.then(|| rows.iter().map(|r| r.3).collect()),
                    flush: flush || b == last,
                })
                .collect();
            Case {
                groups,
                batches,
                arg,
            }
        })
        .boxed()
}

/// The index of a branch, drawn by `weights`; shrinks toward branch 0.
///
/// The value strategies below draw every branch and pick one with this,
/// where `prop_oneof!` would draw only the picked branch but fork an RNG
/// for each other one, several times slower in a debug build over the
/// 10^5 rows a run draws.
fn branch(weights: &'static [u32]) -> impl Strategy<Value = usize> {
    let total: u32 = weights.iter().sum();
    (0..total).prop_map(move |mut x| {
        let mut i = 0;
        while x >= weights[i] {
            x -= weights[i];
            i += 1;
        }
        i
    })
}

/// Plain values first, then the edges, then anything: 3 : 1 : 1.
fn plain_edge_any<T: Strategy>(
    plain: T,
    edges: Vec<T::Value>,
    any: impl Strategy<Value = T::Value>,
) -> impl Strategy<Value = T::Value>
where
    T::Value: Clone + fmt::Debug + 'static,
{
    (branch(&[3, 1, 1]), plain, select(edges), any).prop_map(|(i, plain, edge, any)| match i {
        0 => plain,
        1 => edge,
        _ => any,
    })
}

/// Plain values or edges, by `weights` (two of them).
fn plain_or_edge<T: Strategy>(
    weights: &'static [u32; 2],
    plain: T,
    edges: &'static [T::Value],
) -> impl Strategy<Value = T::Value>
where
    T::Value: Clone + fmt::Debug + 'static,
{
    (branch(weights), plain, select(edges))
        .prop_map(|(i, plain, edge)| if i == 0 { plain } else { edge })
}

/// Half of the FLOAT and DOUBLE values are these (the zeros tie under
/// Java's `<`, NaN never wins, the infinities and extremes overflow sums).
const F32_EDGES: &[f32] = &[
    0.0,
    -0.0,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
];

/// [`F32_EDGES`] as DOUBLE.
const F64_EDGES: &[f64] = &[
    0.0,
    -0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
];

/// An integer in `min..=max` (a carrier of at most 64 bits): mostly small
/// (so groups see equal values), else an edge of the carrier or anything.
fn integer(min: i64, max: i64) -> impl Strategy<Value = V> {
    plain_edge_any(-10i64..=10, vec![max, min, max - 1, min + 1, -1], min..=max)
        .prop_map(|i| V::I(i.into()))
}

/// An unscaled DECIMAL(`precision`, s) value: small, the largest values
/// (two of `MAX / 2 + 1` overflow a DECIMAL(38) sum), or anything.
fn decimal(precision: u8) -> impl Strategy<Value = V> {
    let max = 10i128.pow(u32::from(precision)) - 1;
    let half = max / 2 + 1;
    plain_edge_any(
        -1000i128..=1000,
        vec![max, -max, half, -half, max - 1],
        -max..=max,
    )
    .prop_map(V::I)
}

/// TIMESTAMP(9): milliseconds around the epoch or Flink's ends of range
/// (0000-01-01 and 9999-12-31 23:59:59.999), and nano-of-millisecond.
fn timestamp() -> impl Strategy<Value = V> {
    let millis = plain_or_edge(
        &[3, 1],
        -2i64..=2,
        &[-62_167_219_200_000, 253_402_300_799_999],
    );
    let nanos = plain_edge_any(
        select(&[0i32, 400_000, 800_000][..]),
        vec![999_999, 1],
        0i32..1_000_000,
    );
    (millis, nanos).prop_map(|(m, n)| V::T(m, n))
}

/// Characters of strings: ASCII and two-byte UTF-8 (orders by bytes).
const ALPHABET: &[&str] = &["a", "b", "z", "é", "ß"];

/// Up to `max_chars` characters; shrinks to the empty string.
fn short_string(max_chars: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(select(ALPHABET), 0..=max_chars)
        .prop_map(|chars| chars.concat().into_bytes())
}

/// 16 to 300 repeats of a character and a short tail, so long strings
/// share long prefixes.
fn long_string() -> impl Strategy<Value = Vec<u8>> {
    (select(ALPHABET), 16..=300usize, short_string(2))
        .prop_map(|(c, n, tail)| [c.repeat(n).into_bytes(), tail].concat())
}

struct Shown<'a>(&'a Option<V>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("NULL"),
            Some(V::I(i)) => write!(f, "{i}"),
            Some(V::F32(x)) => write!(f, "{x:?}"),
            Some(V::F64(x)) => write!(f, "{x:?}"),
            Some(V::B(b)) => write!(f, "{b}"),
            Some(V::S(s)) => write!(f, "{:?}", String::from_utf8_lossy(s)),
            Some(V::T(ms, ns)) => write!(f, "{ms}ms+{ns}ns"),
            Some(V::L(items)) => {
                let items: Vec<String> = items.iter().map(|v| Shown(v).to_string()).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

/// A case as its group count, then one batch a line, a row as
/// `g1 -U 2.5 filter=false` (DECIMAL values unscaled).
impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} group(s), {} batch(es):",
            self.groups,
            self.batches.len()
        )?;
        for (b, batch) in self.batches.iter().enumerate() {
            write!(f, "\n  batch {b}")?;
            if batch.filter.is_some() {
                f.write_str(" with FILTER")?;
            }
            if batch.flush {
                f.write_str(", then local partials to global")?;
            }
            f.write_str(": [")?;
            for i in 0..batch.groups.len() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "g{}", batch.groups[i])?;
                if let Some(kinds) = &batch.kinds {
                    let kind = ["+I", "-U", "+U", "-D"][kinds[i] as usize];
                    write!(f, " {kind}")?;
                }
                if self.arg {
                    write!(f, " {}", Shown(&batch.values[i]))?;
                }
                if let Some(filter) = &batch.filter {
                    match filter[i] {
                        Some(true) => {}
                        Some(false) => f.write_str(" filter=false")?,
                        None => f.write_str(" filter=NULL")?,
                    }
                }
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}
