//! Deterministic bench data: seeded argument columns of every SQL type in
//! `specs/types.toml` (as the Arrow arrays that type row names), and
//! streams of 4096-row bundles with their group keys and group ids.

use std::sync::Arc;

use aggforge_runtime::sql_type::LIST_ITEM;
use aggforge_runtime::types::{Layout, ParamKind, SqlType};
use arrow_array::builder::{BooleanBufferBuilder, StringBuilder};
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, TimestampMillisecondType,
};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, BooleanArray, Int32Array, Int64Array, ListArray, PrimitiveArray,
    StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields};

/// Rows in one bundle, as Flink's mini-batch hands them over.
pub const BATCH_ROWS: usize = 4096;
/// The low-cardinality key count of the headline figures.
pub const FEW_KEYS: usize = 64;
/// The high-cardinality key count.
pub const MANY_KEYS: usize = 1_000_000;
/// One row in `NULL_ONE_IN` is NULL in every generated argument column.
pub const NULL_ONE_IN: u64 = 8;

/// SplitMix64: a small, fast, seeded generator; the same seed gives the
/// same data on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }

    /// A value in `low..=high`.
    pub fn range_i64(&mut self, low: i64, high: i64) -> i64 {
        let span = (high as i128 - low as i128 + 1) as u128;
        let draw = ((self.next_u64() as u128 * span) >> 64) as i128;
        (low as i128 + draw) as i64
    }

    /// True with probability 1 / `one_in`.
    pub fn one_in(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// The SQL types the benches cover: one per row of `specs/types.toml`,
/// with the parameters the headline figures use.
pub fn bench_types() -> Vec<SqlType> {
    [
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL_18",
        "DECIMAL_38",
        "DATE",
        "TIME",
        "TIMESTAMP_3",
        "TIMESTAMP_9",
        "BOOLEAN",
        "CHAR",
        "VARCHAR",
    ]
    .iter()
    .filter_map(|row| type_for_row(row))
    .collect()
}

/// The representative SQL type for a `types.toml` row name, from the row
/// itself: a decimal row is DECIMAL(10, 2) when its carrier is 64-bit
/// (max precision <= 18) and DECIMAL(20, 3) otherwise; a precision row
/// takes its largest precision (TIME(3), TIMESTAMP(3), TIMESTAMP(9)); a
/// length family its alias (VARCHAR is STRING) or length 10 (CHAR(10));
/// ARRAY is ARRAY<BIGINT>.
pub fn type_for_row(row: &str) -> Option<SqlType> {
    let info = aggforge_runtime::sql_type::type_rows()
        .iter()
        .find(|r| r.name == row)?;
    let family = aggforge_runtime::sql_type::families()
        .iter()
        .find(|f| f.name == info.family)?;
    let name = family.name;
    let high = info.precision.map(|(_, high)| high);
    let text = match family.params {
        ParamKind::Decimal { .. } if high.is_some_and(|h| h <= 18) => format!("{name}(10, 2)"),
        ParamKind::Decimal { .. } => format!("{name}(20, 3)"),
        ParamKind::Precision { default, .. } => format!("{name}({})", high.unwrap_or(default)),
        ParamKind::Length { .. } => match family.aliases.first() {
            Some((alias, _)) => alias.to_string(),
            None => format!("{name}(10)"),
        },
        ParamKind::None | ParamKind::Ignored => name.to_string(),
        ParamKind::Element => format!("{name}<BIGINT>"),
    };
    text.parse().ok()
}

/// Name of the milliseconds child of the TIMESTAMP(4..9) struct.
pub const TIMESTAMP_MILLIS_FIELD: &str = "millisecond";
/// Name of the nano-of-millisecond child of the TIMESTAMP(4..9) struct.
pub const TIMESTAMP_NANOS_FIELD: &str = "nano_of_millisecond";

/// The Arrow type `specs/types.toml` gives a column of `sql` (the runtime's
/// own mapping, so benches and operators cannot disagree).
pub use aggforge_runtime::plan::arrow_type;

fn timestamp_fields() -> Fields {
    Fields::from(vec![
        Field::new(TIMESTAMP_MILLIS_FIELD, DataType::Int64, false),
        Field::new(TIMESTAMP_NANOS_FIELD, DataType::Int32, false),
    ])
}

/// A validity bitmap with one row in [`NULL_ONE_IN`] NULL, at random.
fn validity(rng: &mut Rng, rows: usize) -> NullBuffer {
    let mut bits = BooleanBufferBuilder::new(rows);
    for _ in 0..rows {
        bits.append(!rng.one_in(NULL_ONE_IN));
    }
    NullBuffer::new(bits.finish())
}

fn primitive<T: ArrowPrimitiveType>(
    rng: &mut Rng,
    rows: usize,
    mut draw: impl FnMut(&mut Rng) -> T::Native,
) -> PrimitiveArray<T> {
    let values: ScalarBuffer<T::Native> = (0..rows).map(|_| draw(rng)).collect();
    let nulls = validity(rng, rows);
    PrimitiveArray::<T>::new(values, Some(nulls))
}

/// Milliseconds of 2000-01-01 and 2030-01-01, the range timestamps take.
const MILLIS_2000: i64 = 946_684_800_000;
const MILLIS_2030: i64 = 1_893_456_000_000;

/// A seeded argument column of `sql`, `rows` long, with one row in eight
/// NULL. Values: integers over their whole range (INT and BIGINT within
/// +-10^6 and +-10^12, so sums stay meaningful), FLOAT/DOUBLE within
/// +-10^6, decimals within their precision, dates and timestamps in
/// 2000-2030, TIME over the whole day, strings of 0-16 ASCII letters.
pub fn argument_column(sql: &SqlType, rows: usize, seed: u64) -> ArrayRef {
    let mut rng = Rng::new(seed);
    let rng = &mut rng;
    match sql.layout().expect("a SQL type with a types.toml row") {
        Layout::Int8 => Arc::new(primitive::<Int8Type>(rng, rows, |r| r.next_u64() as i8)),
        Layout::Int16 => Arc::new(primitive::<Int16Type>(rng, rows, |r| r.next_u64() as i16)),
        Layout::Int32 => Arc::new(primitive::<Int32Type>(rng, rows, |r| {
            r.range_i64(-1_000_000, 1_000_000) as i32
        })),
        Layout::Int64 => Arc::new(primitive::<Int64Type>(rng, rows, |r| {
            r.range_i64(-1_000_000_000_000, 1_000_000_000_000)
        })),
        Layout::Float32 => Arc::new(primitive::<Float32Type>(rng, rows, |r| {
            (r.range_i64(-1_000_000_000, 1_000_000_000) as f32) / 1000.0
        })),
        Layout::Float64 => Arc::new(primitive::<Float64Type>(rng, rows, |r| {
            (r.range_i64(-1_000_000_000_000, 1_000_000_000_000) as f64) / 1_000_000.0
        })),
        Layout::Decimal128 => {
            let (precision, scale) = (sql.precision().unwrap_or(38), sql.scale().unwrap_or(0));
            let digits = precision.min(18) as u32;
            let bound = 10_i64.pow(digits) - 1;
            let wide = precision > 18;
            let array = primitive::<Decimal128Type>(rng, rows, |r| {
                let low = r.range_i64(-bound, bound) as i128;
                if wide {
                    // Use the digits past 18 too.
                    low * 100 + r.below(100) as i128
                } else {
                    low
                }
            });
            Arc::new(
                array
                    .with_precision_and_scale(precision, scale)
                    .unwrap_or_else(|_| unreachable!("precision and scale come from SqlType")),
            )
        }
        Layout::Date32 => Arc::new(primitive::<Date32Type>(rng, rows, |r| {
            r.range_i64(10_957, 21_915) as i32
        })),
        Layout::Time32Millisecond => Arc::new(primitive::<Time32MillisecondType>(rng, rows, |r| {
            r.range_i64(0, 86_399_999) as i32
        })),
        Layout::TimestampMillisecond => {
            Arc::new(primitive::<TimestampMillisecondType>(rng, rows, |r| {
                r.range_i64(MILLIS_2000, MILLIS_2030)
            }))
        }
        Layout::StructTimestamp => {
            let millis: Int64Array = (0..rows)
                .map(|_| rng.range_i64(MILLIS_2000, MILLIS_2030))
                .collect::<Vec<_>>()
                .into();
            let nanos: Int32Array = (0..rows)
                .map(|_| rng.range_i64(0, 999_999) as i32)
                .collect::<Vec<_>>()
                .into();
            let nulls = validity(rng, rows);
            Arc::new(StructArray::new(
                timestamp_fields(),
                vec![Arc::new(millis), Arc::new(nanos)],
                Some(nulls),
            ))
        }
        Layout::Boolean => {
            let mut bits = BooleanBufferBuilder::new(rows);
            for _ in 0..rows {
                bits.append(rng.next_u64() & 1 == 1);
            }
            let nulls = validity(rng, rows);
            Arc::new(BooleanArray::new(bits.finish(), Some(nulls)))
        }
        Layout::Utf8 => {
            let mut builder = StringBuilder::with_capacity(rows, rows * 8);
            let mut text = String::with_capacity(16);
            for _ in 0..rows {
                if rng.one_in(NULL_ONE_IN) {
                    builder.append_null();
                    continue;
                }
                text.clear();
                for _ in 0..rng.below(17) {
                    text.push((b'a' + rng.below(26) as u8) as char);
                }
                builder.append_value(&text);
            }
            Arc::new(builder.finish())
        }
        // ARRAY<T>: 0 to 3 elements of T's column, NULL arrays like the
        // other layouts' NULLs (elements keep their own NULLs).
        Layout::List => {
            let element = sql.element().expect("a List column is an ARRAY");
            let mut offsets = Vec::with_capacity(rows + 1);
            offsets.push(0i32);
            for _ in 0..rows {
                let last = *offsets.last().expect("starts with 0");
                offsets.push(last + rng.below(4) as i32);
            }
            let total = *offsets.last().expect("one per row") as usize;
            let items = argument_column(&element, total, rng.next_u64());
            let item = Arc::new(Field::new(LIST_ITEM, items.data_type().clone(), true));
            Arc::new(ListArray::new(
                item,
                OffsetBuffer::new(offsets.into()),
                items,
                Some(validity(rng, rows)),
            ))
        }
    }
}

/// One bundle's grouping: the BIGINT key column and the dense group id of
/// every row (group `g` has key [`key_of_group`]`(g)`).
#[derive(Debug, Clone)]
pub struct Grouping {
    /// The key column, Int64, no NULLs.
    pub keys: ArrayRef,
    /// Dense group id of each row, below `num_groups`.
    pub group_ids: Vec<u32>,
    /// The same ids as `usize`, as DataFusion's accumulators take them.
    pub group_indices: Vec<usize>,
    /// Number of distinct groups the ids range over.
    pub num_groups: usize,
}

/// The key value of group `group`: scattered, so key order says nothing
/// about group order.
pub fn key_of_group(group: u32) -> i64 {
    (group as i64).wrapping_mul(0x2545_F491_4F6C_DD1D) >> 3
}

/// `batches` bundles of `rows` rows whose keys are drawn uniformly from
/// `num_keys` keys.
pub fn grouping_stream(num_keys: usize, batches: usize, rows: usize, seed: u64) -> Vec<Grouping> {
    let mut rng = Rng::new(seed);
    (0..batches)
        .map(|_| {
            let group_ids: Vec<u32> = (0..rows)
                .map(|_| rng.below(num_keys as u64) as u32)
                .collect();
            let keys: Int64Array = group_ids.iter().map(|&g| key_of_group(g)).collect();
            Grouping {
                keys: Arc::new(keys),
                group_indices: group_ids.iter().map(|&g| g as usize).collect(),
                group_ids,
                num_groups: num_keys,
            }
        })
        .collect()
}

/// A stream of bundles with one argument column per requested type.
#[derive(Debug, Clone)]
pub struct Stream {
    /// The grouping of each bundle.
    pub groupings: Vec<Grouping>,
    /// `columns[bundle][i]` is the i-th requested type's column.
    pub columns: Vec<Vec<ArrayRef>>,
}

impl Stream {
    /// `batches` bundles of [`BATCH_ROWS`] rows over `num_keys` keys, with
    /// one seeded argument column of each of `types`.
    pub fn new(types: &[SqlType], num_keys: usize, batches: usize, seed: u64) -> Stream {
        let groupings = grouping_stream(num_keys, batches, BATCH_ROWS, seed);
        let columns = (0..batches)
            .map(|b| {
                types
                    .iter()
                    .enumerate()
                    .map(|(i, ty)| {
                        argument_column(ty, BATCH_ROWS, seed ^ ((b as u64) << 20) ^ (i as u64 + 1))
                    })
                    .collect()
            })
            .collect();
        Stream { groupings, columns }
    }

    /// Rows in the whole stream.
    pub fn rows(&self) -> usize {
        self.groupings.iter().map(|g| g.group_ids.len()).sum()
    }
}

/// One bundle with retractions, for retracting specializations: every
/// fourth row is a -U of the row before it (same group, same value), the
/// rest are +I, so state never retracts what it did not take.
#[derive(Debug, Clone)]
pub struct RetractingBundle {
    /// The argument columns, rows rearranged.
    pub columns: Vec<ArrayRef>,
    /// Group id of each row.
    pub group_ids: Vec<u32>,
    /// Flink row kind of each row (0 +I, 1 -U).
    pub row_kinds: Vec<i8>,
}

/// Rearranges a bundle into a [`RetractingBundle`].
pub fn with_retractions(
    columns: &[ArrayRef],
    group_ids: &[u32],
) -> Result<RetractingBundle, arrow_schema::ArrowError> {
    let source = |row: usize| if row % 4 == 3 { row - 1 } else { row };
    let indices: arrow_array::UInt32Array =
        (0..group_ids.len()).map(|r| source(r) as u32).collect();
    let columns = columns
        .iter()
        .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RetractingBundle {
        columns,
        group_ids: (0..group_ids.len()).map(|r| group_ids[source(r)]).collect(),
        row_kinds: (0..group_ids.len())
            .map(|r| if r % 4 == 3 { 1 } else { 0 })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    #[test]
    fn columns_have_the_spec_arrow_type_and_one_null_in_eight() {
        for ty in bench_types() {
            let column = argument_column(&ty, 40_000, 7);
            assert_eq!(column.data_type(), &arrow_type(&ty), "{ty}");
            assert_eq!(column.len(), 40_000);
            let nulls = column.null_count() as f64 / 40_000.0;
            assert!((nulls - 0.125).abs() < 0.01, "{ty}: null fraction {nulls}");
        }
    }

    #[test]
    fn same_seed_same_data_other_seed_other_data() {
        for ty in bench_types() {
            let a = argument_column(&ty, 1000, 3);
            let b = argument_column(&ty, 1000, 3);
            let c = argument_column(&ty, 1000, 4);
            assert_eq!(a.to_data(), b.to_data(), "{ty}");
            assert_ne!(a.to_data(), c.to_data(), "{ty}");
        }
    }

    #[test]
    fn decimals_stay_within_their_precision() {
        for (precision, scale) in [(10u8, 2i8), (20, 3)] {
            let ty = SqlType::of(&format!("DECIMAL({precision}, {scale})"));
            let column = argument_column(&ty, 10_000, 1);
            let array = column
                .as_any()
                .downcast_ref::<arrow_array::Decimal128Array>()
                .expect("decimal column");
            assert!(array.validate_decimal_precision(precision).is_ok());
            let max = array.iter().flatten().map(i128::abs).max().unwrap_or(0);
            assert!(max > 10_i128.pow(precision as u32 - 2), "uses the range");
        }
    }

    #[test]
    fn grouping_ids_cover_the_keys_and_match_key_values() {
        let stream = grouping_stream(FEW_KEYS, 4, BATCH_ROWS, 9);
        let mut seen = [false; FEW_KEYS];
        for g in &stream {
            let keys = g.keys.as_any().downcast_ref::<Int64Array>().expect("i64");
            for (row, &id) in g.group_ids.iter().enumerate() {
                assert!((id as usize) < FEW_KEYS);
                assert_eq!(keys.value(row), key_of_group(id));
                assert_eq!(g.group_indices[row], id as usize);
                seen[id as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        let distinct: std::collections::HashSet<i64> =
            (0..MANY_KEYS as u32).map(key_of_group).collect();
        assert_eq!(distinct.len(), MANY_KEYS, "keys of distinct groups differ");
    }

    #[test]
    fn retractions_repeat_the_row_before() {
        let stream = Stream::new(&[SqlType::of("INT")], FEW_KEYS, 1, 5);
        let b = with_retractions(&stream.columns[0], &stream.groupings[0].group_ids).unwrap();
        let v = b.columns[0]
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .expect("int");
        for r in (3..BATCH_ROWS).step_by(4) {
            assert_eq!(b.row_kinds[r], 1);
            assert_eq!(b.row_kinds[r - 1], 0);
            assert_eq!(b.group_ids[r], b.group_ids[r - 1]);
            assert_eq!(v.is_null(r), v.is_null(r - 1));
            if v.is_valid(r) {
                assert_eq!(v.value(r), v.value(r - 1));
            }
        }
    }

    #[test]
    fn many_key_stream_spreads_over_a_million_groups() {
        let stream = grouping_stream(MANY_KEYS, 8, BATCH_ROWS, 2);
        let max = stream
            .iter()
            .flat_map(|g| g.group_ids.iter().copied())
            .max()
            .unwrap_or(0);
        assert!(max as usize > MANY_KEYS * 9 / 10 && (max as usize) < MANY_KEYS);
    }
}
