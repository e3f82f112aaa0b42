//! The deliberately general baseline: what a generic engine does. Every
//! value is read from Arrow one row at a time into a boxed scalar enum
//! (as DataFusion's `ScalarValue`), and folded by boxed, dynamically
//! dispatched accumulators that match on the scalar's variant. Keys are
//! scalars too, looked up in one hash map per operator that holds a `Vec`
//! of boxed accumulators per group.

mod values;

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, TimestampMillisecondType,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use crate::data::{TIMESTAMP_MILLIS_FIELD, TIMESTAMP_NANOS_FIELD};

pub use values::{FirstValue, LastValue, ListAgg, LISTAGG_SEPARATOR};

/// One boxed SQL value.
#[derive(Debug, Clone)]
pub enum Scalar {
    /// SQL NULL.
    Null,
    /// BOOLEAN.
    Boolean(bool),
    /// TINYINT.
    Int8(i8),
    /// SMALLINT.
    Int16(i16),
    /// INT.
    Int32(i32),
    /// BIGINT.
    Int64(i64),
    /// FLOAT.
    Float32(f32),
    /// DOUBLE.
    Float64(f64),
    /// DECIMAL(p, s): unscaled value, precision, scale.
    Decimal(i128, u8, i8),
    /// DATE, days since the epoch.
    Date(i32),
    /// TIME(3), milliseconds of the day.
    Time(i32),
    /// TIMESTAMP(3), epoch milliseconds.
    TimestampMillis(i64),
    /// TIMESTAMP(9): epoch milliseconds and nano-of-millisecond.
    TimestampNanos(i64, i32),
    /// CHAR / VARCHAR, owned.
    Utf8(String),
}

/// Errors of the general path: a column type it does not read, or two
/// scalars of different types combined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneralError(pub String);

impl std::fmt::Display for GeneralError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GeneralError {}

type Result<T> = std::result::Result<T, GeneralError>;

impl Scalar {
    /// Reads row `row` of `array` (downcasting per call, as a generic
    /// `ScalarValue::try_from_array` does).
    pub fn from_array(array: &ArrayRef, row: usize) -> Result<Scalar> {
        if array.is_null(row) {
            return Ok(Scalar::Null);
        }
        Ok(match array.data_type() {
            DataType::Boolean => Scalar::Boolean(array.as_boolean().value(row)),
            DataType::Int8 => Scalar::Int8(array.as_primitive::<Int8Type>().value(row)),
            DataType::Int16 => Scalar::Int16(array.as_primitive::<Int16Type>().value(row)),
            DataType::Int32 => Scalar::Int32(array.as_primitive::<Int32Type>().value(row)),
            DataType::Int64 => Scalar::Int64(array.as_primitive::<Int64Type>().value(row)),
            DataType::Float32 => Scalar::Float32(array.as_primitive::<Float32Type>().value(row)),
            DataType::Float64 => Scalar::Float64(array.as_primitive::<Float64Type>().value(row)),
            DataType::Decimal128(p, s) => {
                Scalar::Decimal(array.as_primitive::<Decimal128Type>().value(row), *p, *s)
            }
            DataType::Date32 => Scalar::Date(array.as_primitive::<Date32Type>().value(row)),
            DataType::Time32(TimeUnit::Millisecond) => {
                Scalar::Time(array.as_primitive::<Time32MillisecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Millisecond, None) => {
                Scalar::TimestampMillis(array.as_primitive::<TimestampMillisecondType>().value(row))
            }
            DataType::Struct(_) => {
                let parts = array.as_struct();
                let millis = parts
                    .column_by_name(TIMESTAMP_MILLIS_FIELD)
                    .ok_or_else(|| GeneralError("timestamp struct without millis".into()))?;
                let nanos = parts
                    .column_by_name(TIMESTAMP_NANOS_FIELD)
                    .ok_or_else(|| GeneralError("timestamp struct without nanos".into()))?;
                Scalar::TimestampNanos(
                    millis.as_primitive::<Int64Type>().value(row),
                    nanos.as_primitive::<Int32Type>().value(row),
                )
            }
            DataType::Utf8 => Scalar::Utf8(array.as_string::<i32>().value(row).to_string()),
            other => return Err(GeneralError(format!("no scalar for {other}"))),
        })
    }

    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Scalar::Null)
    }

    /// Orders two non-NULL scalars of the same type (Java `<` for floats:
    /// NaN is unordered). `None` when they cannot be compared.
    pub fn compare(&self, other: &Scalar) -> Option<Ordering> {
        use Scalar::*;
        match (self, other) {
            (Boolean(a), Boolean(b)) => a.partial_cmp(b),
            (Int8(a), Int8(b)) => a.partial_cmp(b),
            (Int16(a), Int16(b)) => a.partial_cmp(b),
            (Int32(a), Int32(b)) => a.partial_cmp(b),
            (Int64(a), Int64(b)) => a.partial_cmp(b),
            (Float32(a), Float32(b)) => a.partial_cmp(b),
            (Float64(a), Float64(b)) => a.partial_cmp(b),
            (Decimal(a, _, sa), Decimal(b, _, sb)) if sa == sb => a.partial_cmp(b),
            (Date(a), Date(b)) => a.partial_cmp(b),
            (Time(a), Time(b)) => a.partial_cmp(b),
            (TimestampMillis(a), TimestampMillis(b)) => a.partial_cmp(b),
            (TimestampNanos(am, an), TimestampNanos(bm, bn)) => (am, an).partial_cmp(&(bm, bn)),
            (Utf8(a), Utf8(b)) => a.as_bytes().partial_cmp(b.as_bytes()),
            _ => None,
        }
    }

    /// `self + other` for numbers of the same type: integers wrap (Java
    /// arithmetic), floats follow IEEE, decimals give NULL past 38 digits.
    pub fn add(&self, other: &Scalar) -> Result<Scalar> {
        use Scalar::*;
        Ok(match (self, other) {
            (Null, x) | (x, Null) => x.clone(),
            (Int8(a), Int8(b)) => Int8(a.wrapping_add(*b)),
            (Int16(a), Int16(b)) => Int16(a.wrapping_add(*b)),
            (Int32(a), Int32(b)) => Int32(a.wrapping_add(*b)),
            (Int64(a), Int64(b)) => Int64(a.wrapping_add(*b)),
            (Float32(a), Float32(b)) => Float32(a + b),
            (Float64(a), Float64(b)) => Float64(a + b),
            (Decimal(a, _, sa), Decimal(b, _, sb)) if sa == sb => match a.checked_add(*b) {
                Some(sum) if sum.unsigned_abs() < 10_u128.pow(38) => Decimal(sum, 38, *sa),
                _ => Null,
            },
            (a, b) => return Err(GeneralError(format!("cannot add {a:?} and {b:?}"))),
        })
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Scalar) -> bool {
        use Scalar::*;
        match (self, other) {
            (Null, Null) => true,
            (Float32(a), Float32(b)) => a.to_bits() == b.to_bits(),
            (Float64(a), Float64(b)) => a.to_bits() == b.to_bits(),
            (Decimal(a, _, sa), Decimal(b, _, sb)) => a == b && sa == sb,
            _ => self.compare(other) == Some(Ordering::Equal),
        }
    }
}

impl Eq for Scalar {}

impl Hash for Scalar {
    fn hash<H: Hasher>(&self, state: &mut H) {
        use Scalar::*;
        std::mem::discriminant(self).hash(state);
        match self {
            Null => {}
            Boolean(v) => v.hash(state),
            Int8(v) => v.hash(state),
            Int16(v) => v.hash(state),
            Int32(v) | Date(v) | Time(v) => v.hash(state),
            Int64(v) | TimestampMillis(v) => v.hash(state),
            Float32(v) => v.to_bits().hash(state),
            Float64(v) => v.to_bits().hash(state),
            Decimal(v, _, s) => (v, s).hash(state),
            TimestampNanos(m, n) => (m, n).hash(state),
            Utf8(v) => v.hash(state),
        }
    }
}

/// A boxed, type-erased accumulator for one group.
pub trait BoxedAccumulator: std::fmt::Debug {
    /// Folds one value (NULLs are skipped).
    fn update(&mut self, value: &Scalar) -> Result<()>;
    /// The current result.
    fn evaluate(&self) -> Result<Scalar>;
}

/// MIN or MAX: keeps a clone of the best value seen.
#[derive(Debug)]
pub struct Extreme {
    best: Scalar,
    keep: Ordering,
}

impl BoxedAccumulator for Extreme {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        if value.is_null() {
            return Ok(());
        }
        if self.best.is_null() || value.compare(&self.best) == Some(self.keep) {
            self.best = value.clone();
        }
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        Ok(self.best.clone())
    }
}

/// SUM: NULL until a non-NULL value arrives.
#[derive(Debug, Default)]
pub struct Sum {
    sum: Option<Scalar>,
}

impl BoxedAccumulator for Sum {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        if value.is_null() {
            return Ok(());
        }
        self.sum = Some(match &self.sum {
            None => value.clone(),
            Some(sum) => sum.add(value)?,
        });
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        Ok(self.sum.clone().unwrap_or(Scalar::Null))
    }
}

/// COUNT(x): non-NULL values.
#[derive(Debug, Default)]
pub struct Count {
    count: i64,
}

impl BoxedAccumulator for Count {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        if !value.is_null() {
            self.count += 1;
        }
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        Ok(Scalar::Int64(self.count))
    }
}

/// AVG: a boxed sum and a count; integer averages truncate (Flink), decimal
/// ones divide the unscaled sum, floats divide.
#[derive(Debug, Default)]
pub struct Avg {
    sum: Sum,
    count: i64,
}

impl BoxedAccumulator for Avg {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        if !value.is_null() {
            self.sum.update(value)?;
            self.count += 1;
        }
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        use Scalar::*;
        if self.count == 0 {
            return Ok(Null);
        }
        let n = self.count;
        Ok(match self.sum.evaluate()? {
            Int8(s) => Int8((s as i64 / n) as i8),
            Int16(s) => Int16((s as i64 / n) as i16),
            Int32(s) => Int32((s as i64 / n) as i32),
            Int64(s) => Int64(s / n),
            Float32(s) => Float32(s / n as f32),
            Float64(s) => Float64(s / n as f64),
            Decimal(s, p, sc) => Decimal(s / n as i128, p, sc),
            Null => Null,
            other => return Err(GeneralError(format!("cannot average {other:?}"))),
        })
    }
}

/// The aggregate functions of the general path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// MIN(x).
    Min,
    /// MAX(x).
    Max,
    /// SUM(x).
    Sum,
    /// COUNT(x).
    Count,
    /// AVG(x).
    Avg,
    /// FIRST_VALUE(x) over insert-only input: the first non-NULL value.
    FirstValue,
    /// LAST_VALUE(x) over insert-only input: the latest non-NULL value.
    LastValue,
    /// LISTAGG(x) over insert-only input: the non-NULL strings joined by
    /// [`LISTAGG_SEPARATOR`].
    ListAgg,
}

impl Function {
    /// A fresh boxed accumulator for one group.
    pub fn create(self) -> Box<dyn BoxedAccumulator> {
        match self {
            Function::Min => Box::new(Extreme {
                best: Scalar::Null,
                keep: Ordering::Less,
            }),
            Function::Max => Box::new(Extreme {
                best: Scalar::Null,
                keep: Ordering::Greater,
            }),
            Function::Sum => Box::<Sum>::default(),
            Function::Count => Box::<Count>::default(),
            Function::Avg => Box::<Avg>::default(),
            Function::FirstValue => Box::<FirstValue>::default(),
            Function::LastValue => Box::<LastValue>::default(),
            Function::ListAgg => Box::<ListAgg>::default(),
        }
    }
}

/// One aggregate call: a function over an argument column index.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The function.
    pub function: Function,
    /// Index of its argument among the update's columns.
    pub arg: usize,
}

/// The general group aggregation: scalar keys in a hash map, a `Vec` of
/// boxed accumulators per group.
#[derive(Debug)]
pub struct GeneralAggregator {
    calls: Vec<Call>,
    groups: HashMap<Scalar, Vec<Box<dyn BoxedAccumulator>>, ahash::RandomState>,
}

impl GeneralAggregator {
    /// An empty aggregation for `calls`.
    pub fn new(calls: Vec<Call>) -> GeneralAggregator {
        GeneralAggregator {
            calls,
            groups: HashMap::default(),
        }
    }

    /// Folds a batch: per row, the key scalar is looked up (or inserted)
    /// and every call reads its argument scalar and updates its box.
    pub fn update(&mut self, keys: &ArrayRef, args: &[ArrayRef]) -> Result<()> {
        for column in args {
            if column.len() != keys.len() {
                return Err(GeneralError("argument and key lengths differ".into()));
            }
        }
        let calls = &self.calls;
        for row in 0..keys.len() {
            let key = Scalar::from_array(keys, row)?;
            let accumulators = self
                .groups
                .entry(key)
                .or_insert_with(|| calls.iter().map(|c| c.function.create()).collect());
            for (call, accumulator) in calls.iter().zip(accumulators.iter_mut()) {
                let column = args
                    .get(call.arg)
                    .ok_or_else(|| GeneralError(format!("no argument column {}", call.arg)))?;
                accumulator.update(&Scalar::from_array(column, row)?)?;
            }
        }
        Ok(())
    }

    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// True when no group is held.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The results of one group, in call order.
    pub fn results(&self, key: &Scalar) -> Result<Option<Vec<Scalar>>> {
        self.groups
            .get(key)
            .map(|accs| accs.iter().map(|a| a.evaluate()).collect())
            .transpose()
    }

    /// Drops every group (a local phase does this after each bundle).
    pub fn clear(&mut self) {
        self.groups.clear();
    }
}

/// The general accumulators alone, given group ids: a `Vec` of boxed
/// accumulators per group id, fed boxed scalars.
#[derive(Debug)]
pub struct GeneralByGroupId {
    calls: Vec<Call>,
    groups: Vec<Vec<Box<dyn BoxedAccumulator>>>,
}

impl GeneralByGroupId {
    /// An empty state for `calls`.
    pub fn new(calls: Vec<Call>) -> GeneralByGroupId {
        GeneralByGroupId {
            calls,
            groups: Vec::new(),
        }
    }

    /// Folds a batch whose rows belong to the given groups.
    pub fn update(&mut self, group_ids: &[u32], args: &[ArrayRef]) -> Result<()> {
        for column in args {
            if column.len() != group_ids.len() {
                return Err(GeneralError("argument and group id lengths differ".into()));
            }
        }
        for (row, &group) in group_ids.iter().enumerate() {
            let group = group as usize;
            if group >= self.groups.len() {
                let calls = &self.calls;
                self.groups.resize_with(group + 1, || {
                    calls.iter().map(|c| c.function.create()).collect()
                });
            }
            for (call, accumulator) in self.calls.iter().zip(self.groups[group].iter_mut()) {
                let column = args
                    .get(call.arg)
                    .ok_or_else(|| GeneralError(format!("no argument column {}", call.arg)))?;
                accumulator.update(&Scalar::from_array(column, row)?)?;
            }
        }
        Ok(())
    }

    /// The results of one group, in call order.
    pub fn results(&self, group: u32) -> Result<Option<Vec<Scalar>>> {
        self.groups
            .get(group as usize)
            .map(|accs| accs.iter().map(|a| a.evaluate()).collect())
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{argument_column, key_of_group, Stream, FEW_KEYS};
    use aggforge_runtime::types::SqlType;
    use arrow_array::{Decimal128Array, Int32Array, Int64Array, StringArray};
    use std::sync::Arc;

    fn all_calls() -> Vec<Call> {
        [
            Function::Min,
            Function::Max,
            Function::Sum,
            Function::Count,
            Function::Avg,
        ]
        .iter()
        .map(|&function| Call { function, arg: 0 })
        .collect()
    }

    #[test]
    fn folds_min_max_sum_count_avg_per_key() {
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 1, 1, 2, 3]));
        let values: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(5),
            Some(-1),
            None,
            Some(2),
            Some(7),
            None,
        ]));
        let mut agg = GeneralAggregator::new(all_calls());
        agg.update(&keys, std::slice::from_ref(&values)).unwrap();
        assert_eq!(agg.len(), 3);
        use Scalar::*;
        assert_eq!(
            agg.results(&Int64(1)).unwrap().unwrap(),
            vec![Int32(2), Int32(5), Int32(7), Int64(2), Int32(3)]
        );
        assert_eq!(
            agg.results(&Int64(2)).unwrap().unwrap(),
            vec![Int32(-1), Int32(7), Int32(6), Int64(2), Int32(3)]
        );
        assert_eq!(
            agg.results(&Int64(3)).unwrap().unwrap(),
            vec![Null, Null, Null, Int64(0), Null]
        );
    }

    #[test]
    fn folds_first_last_listagg_per_key() {
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 1, 1, 2, 3, 1]));
        let numbers: ArrayRef = Arc::new(Int64Array::from(vec![
            None,
            Some(4),
            Some(8),
            Some(-2),
            None,
            None,
            None,
        ]));
        let strings: ArrayRef = Arc::new(StringArray::from(vec![
            Some("a"),
            None,
            None,
            Some(""),
            Some("q"),
            None,
            Some("c"),
        ]));
        let calls = [
            (Function::FirstValue, 0),
            (Function::LastValue, 0),
            (Function::FirstValue, 1),
            (Function::LastValue, 1),
            (Function::ListAgg, 1),
        ]
        .iter()
        .map(|&(function, arg)| Call { function, arg })
        .collect();
        let mut agg = GeneralAggregator::new(calls);
        agg.update(&keys, &[numbers, strings]).unwrap();
        use Scalar::*;
        let text = |s: &str| Utf8(s.to_string());
        assert_eq!(
            agg.results(&Int64(1)).unwrap().unwrap(),
            vec![Int64(8), Int64(-2), text("a"), text("c"), text("a,,c")]
        );
        assert_eq!(
            agg.results(&Int64(2)).unwrap().unwrap(),
            vec![Int64(4), Int64(4), text("q"), text("q"), text("q")]
        );
        assert_eq!(
            agg.results(&Int64(3)).unwrap().unwrap(),
            vec![Null, Null, Null, Null, Null]
        );
    }

    #[test]
    fn first_last_listagg_match_a_direct_fold_of_the_bench_stream() {
        let stream = Stream::new(&[SqlType::of("VARCHAR")], FEW_KEYS, 3, 23);
        let functions = [Function::FirstValue, Function::LastValue, Function::ListAgg];
        let calls = functions.iter().map(|&function| Call { function, arg: 0 });
        let mut by_id = GeneralByGroupId::new(calls.collect());
        let mut expected: Vec<Vec<&str>> = vec![Vec::new(); FEW_KEYS];
        for (grouping, columns) in stream.groupings.iter().zip(&stream.columns) {
            by_id.update(&grouping.group_ids, columns).unwrap();
            let strings = columns[0].as_string::<i32>();
            for (row, &group) in grouping.group_ids.iter().enumerate() {
                if strings.is_valid(row) {
                    expected[group as usize].push(strings.value(row));
                }
            }
        }
        for (group, values) in expected.iter().enumerate() {
            let want = match (values.first(), values.last()) {
                (Some(first), Some(last)) => vec![
                    Scalar::Utf8(first.to_string()),
                    Scalar::Utf8(last.to_string()),
                    Scalar::Utf8(values.join(LISTAGG_SEPARATOR)),
                ],
                _ => vec![Scalar::Null; 3],
            };
            let got = by_id.results(group as u32).unwrap().unwrap();
            assert_eq!(got, want, "group {group}");
        }
    }

    #[test]
    fn decimal_sum_keeps_scale_and_nulls_past_38_digits() {
        let big = 10_i128.pow(38) - 1;
        let values: ArrayRef = Arc::new(
            Decimal128Array::from(vec![big, 1])
                .with_precision_and_scale(38, 3)
                .unwrap(),
        );
        let mut by_id = GeneralByGroupId::new(vec![Call {
            function: Function::Sum,
            arg: 0,
        }]);
        by_id.update(&[0, 0], &[values]).unwrap();
        assert_eq!(by_id.results(0).unwrap().unwrap(), vec![Scalar::Null]);
    }

    #[test]
    fn key_path_and_group_id_path_agree_on_every_type() {
        for ty in crate::data::bench_types() {
            let stream = Stream::new(&[ty], FEW_KEYS, 2, 11);
            let mut by_key = GeneralAggregator::new(vec![
                Call {
                    function: Function::Min,
                    arg: 0,
                },
                Call {
                    function: Function::Max,
                    arg: 0,
                },
            ]);
            let mut by_id = GeneralByGroupId::new(vec![
                Call {
                    function: Function::Min,
                    arg: 0,
                },
                Call {
                    function: Function::Max,
                    arg: 0,
                },
            ]);
            for (grouping, columns) in stream.groupings.iter().zip(&stream.columns) {
                by_key.update(&grouping.keys, columns).unwrap();
                by_id.update(&grouping.group_ids, columns).unwrap();
            }
            for g in 0..FEW_KEYS as u32 {
                let a = by_key.results(&Scalar::Int64(key_of_group(g))).unwrap();
                let b = by_id.results(g).unwrap();
                assert_eq!(a, b, "{ty} group {g}");
                let r = a.unwrap();
                assert!(
                    r[0].compare(&r[1]) != Some(Ordering::Greater),
                    "{ty}: min <= max"
                );
            }
        }
    }

    #[test]
    fn reads_every_bench_type() {
        for ty in crate::data::bench_types() {
            let column = argument_column(&ty, 64, 5);
            for row in 0..64 {
                let v = Scalar::from_array(&column, row).unwrap();
                assert_eq!(v.is_null(), column.is_null(row), "{ty}");
            }
        }
        let ty = SqlType::of("TIMESTAMP(9)");
        let column = argument_column(&ty, 8, 5);
        let first = (0..8).find(|&r| !column.is_null(r)).unwrap();
        assert!(matches!(
            Scalar::from_array(&column, first).unwrap(),
            Scalar::TimestampNanos(_, n) if (0..1_000_000).contains(&n)
        ));
    }
}
