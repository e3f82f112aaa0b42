//! Every specialization in the registry against a tiny reference model
//! written the obvious way (a list of values per group folded with Flink's
//! rules), over random batches: single phase, local/global split,
//! snapshot/restore, and traced per-row results with changed flags.

use std::sync::Arc;

use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::kernel::decimal::{avg_38, MAX_38};
use aggforge_runtime::kernel::timestamp_struct_type;
use aggforge_runtime::registry::{self, Admission};
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::*;
use arrow_schema::{DataType, TimeUnit};
use proptest::prelude::*;

/// One value as the reference model holds it.
#[derive(Debug, Clone, PartialEq)]
enum V {
    I(i128),
    F32(f32),
    F64(f64),
    B(bool),
    S(Vec<u8>),
    T(i64, i32),
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The SQL type the test uses for each type row.
fn sql_type(row: &str) -> SqlType {
    let text = match row {
        "DECIMAL_18" => "DECIMAL(10, 2)",
        "DECIMAL_38" => "DECIMAL(38, 4)",
        "TIME" => "TIME(3)",
        "TIMESTAMP_3" => "TIMESTAMP(3)",
        "TIMESTAMP_9" => "TIMESTAMP(9)",
        "CHAR" => "CHAR(4)",
        other => other,
    };
    text.parse().unwrap()
}

fn random_value(rng: &mut Rng, ty: &SqlType) -> V {
    let small = rng.below(4) != 0; // mostly small values so groups collide
    match ty {
        SqlType::TinyInt => V::I(rng.next() as i8 as i128),
        SqlType::SmallInt => V::I(rng.next() as i16 as i128),
        SqlType::Int | SqlType::Date | SqlType::Time { .. } => V::I(if small {
            rng.below(21) as i128 - 10
        } else {
            rng.next() as i32 as i128
        }),
        SqlType::BigInt | SqlType::Timestamp { precision: 0..=3 } => V::I(if small {
            rng.below(21) as i128 - 10
        } else {
            rng.next() as i64 as i128
        }),
        SqlType::Decimal { precision, .. } => {
            let max = 10i128.pow(u32::from(*precision)) - 1;
            let v = if small {
                rng.below(2001) as i128 - 1000
            } else {
                ((rng.next() as i128) << 64 | rng.next() as i128) % (max + 1)
            };
            V::I(v)
        }
        SqlType::Float => V::F32(match rng.below(10) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f32::INFINITY,
            _ => (rng.below(2001) as f32 - 1000.0) / 8.0,
        }),
        SqlType::Double => V::F64(match rng.below(10) {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f64::NEG_INFINITY,
            _ => (rng.below(2001) as f64 - 1000.0) / 3.0,
        }),
        SqlType::Boolean => V::B(rng.below(2) == 0),
        SqlType::Char { .. } | SqlType::Varchar { .. } => {
            let len = rng.below(4) as usize;
            let alphabet = ["a", "b", "z", "é", "ß", ""];
            let s: String = (0..len).map(|_| alphabet[rng.below(6) as usize]).collect();
            V::S(s.into_bytes())
        }
        SqlType::Timestamp { .. } => V::T(rng.below(5) as i64 - 2, rng.below(3) as i32 * 400_000),
    }
}

/// Builds an Arrow column of `data_type` from reference values.
fn to_array(values: &[Option<V>], data_type: &DataType) -> ArrayRef {
    let ints = || {
        values.iter().map(|v| match v {
            Some(V::I(i)) => Some(*i),
            _ => None,
        })
    };
    match data_type {
        DataType::Int8 => Arc::new(Int8Array::from_iter(ints().map(|v| v.map(|i| i as i8)))),
        DataType::Int16 => Arc::new(Int16Array::from_iter(ints().map(|v| v.map(|i| i as i16)))),
        DataType::Int32 => Arc::new(Int32Array::from_iter(ints().map(|v| v.map(|i| i as i32)))),
        DataType::Int64 => Arc::new(Int64Array::from_iter(ints().map(|v| v.map(|i| i as i64)))),
        DataType::Date32 => Arc::new(Date32Array::from_iter(ints().map(|v| v.map(|i| i as i32)))),
        DataType::Time32(TimeUnit::Millisecond) => Arc::new(Time32MillisecondArray::from_iter(
            ints().map(|v| v.map(|i| i as i32)),
        )),
        DataType::Timestamp(TimeUnit::Millisecond, None) => Arc::new(
            TimestampMillisecondArray::from_iter(ints().map(|v| v.map(|i| i as i64))),
        ),
        DataType::Decimal128(p, s) => Arc::new(
            Decimal128Array::from_iter(ints())
                .with_precision_and_scale(*p, *s)
                .unwrap(),
        ),
        DataType::Float32 => Arc::new(Float32Array::from_iter(values.iter().map(|v| match v {
            Some(V::F32(f)) => Some(*f),
            _ => None,
        }))),
        DataType::Float64 => Arc::new(Float64Array::from_iter(values.iter().map(|v| match v {
            Some(V::F64(f)) => Some(*f),
            _ => None,
        }))),
        DataType::Boolean => Arc::new(BooleanArray::from_iter(values.iter().map(|v| match v {
            Some(V::B(b)) => Some(*b),
            _ => None,
        }))),
        DataType::Utf8 => Arc::new(StringArray::from_iter(values.iter().map(|v| match v {
            Some(V::S(s)) => Some(String::from_utf8(s.clone()).unwrap()),
            _ => None,
        }))),
        DataType::Struct(fields) => {
            let millis: Vec<i64> = values
                .iter()
                .map(|v| match v {
                    Some(V::T(m, _)) => *m,
                    _ => 0,
                })
                .collect();
            let nanos: Vec<i32> = values
                .iter()
                .map(|v| match v {
                    Some(V::T(_, n)) => *n,
                    _ => 0,
                })
                .collect();
            let valid: Vec<bool> = values.iter().map(|v| v.is_some()).collect();
            Arc::new(StructArray::new(
                fields.clone(),
                vec![
                    Arc::new(Int64Array::from(millis)),
                    Arc::new(Int32Array::from(nanos)),
                ],
                Some(valid.into()),
            ))
        }
        other => panic!("test does not build {other}"),
    }
}

/// Reads an Arrow column into reference values.
fn from_array(array: &ArrayRef) -> Vec<Option<V>> {
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                return None;
            }
            Some(match array.data_type() {
                DataType::Int8 => V::I(array.as_primitive::<Int8Type>().value(i).into()),
                DataType::Int16 => V::I(array.as_primitive::<Int16Type>().value(i).into()),
                DataType::Int32 => V::I(array.as_primitive::<Int32Type>().value(i).into()),
                DataType::Int64 => V::I(array.as_primitive::<Int64Type>().value(i).into()),
                DataType::Date32 => V::I(array.as_primitive::<Date32Type>().value(i).into()),
                DataType::Time32(_) => V::I(
                    array
                        .as_primitive::<Time32MillisecondType>()
                        .value(i)
                        .into(),
                ),
                DataType::Timestamp(..) => V::I(
                    array
                        .as_primitive::<TimestampMillisecondType>()
                        .value(i)
                        .into(),
                ),
                DataType::Decimal128(..) => V::I(array.as_primitive::<Decimal128Type>().value(i)),
                DataType::Float32 => V::F32(array.as_primitive::<Float32Type>().value(i)),
                DataType::Float64 => V::F64(array.as_primitive::<Float64Type>().value(i)),
                DataType::Boolean => V::B(array.as_boolean().value(i)),
                DataType::Utf8 => V::S(array.as_string::<i32>().value(i).as_bytes().to_vec()),
                DataType::Struct(_) => {
                    let s = array.as_struct();
                    V::T(
                        s.column(0).as_primitive::<Int64Type>().value(i),
                        s.column(1).as_primitive::<Int32Type>().value(i),
                    )
                }
                other => panic!("test does not read {other}"),
            })
        })
        .collect()
}

/// Same value, NaN equal to NaN (for comparing results).
fn identical(a: &Option<V>, b: &Option<V>) -> bool {
    match (a, b) {
        (Some(V::F32(x)), Some(V::F32(y))) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Some(V::F64(x)), Some(V::F64(y))) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

/// Flink's record equality of results: Java `==` for floats.
fn java_equal(a: &Option<V>, b: &Option<V>) -> bool {
    match (a, b) {
        (Some(V::F32(x)), Some(V::F32(y))) => x == y,
        (Some(V::F64(x)), Some(V::F64(y))) => x == y,
        _ => a == b,
    }
}

/// Java `<` under each type's order.
fn less(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::I(x), V::I(y)) => x < y,
        (V::F32(x), V::F32(y)) => x < y,
        (V::F64(x), V::F64(y)) => x < y,
        (V::B(x), V::B(y)) => !x & y,
        (V::S(x), V::S(y)) => x < y,
        (V::T(xm, xn), V::T(ym, yn)) => (xm, xn) < (ym, yn),
        _ => panic!("mixed types"),
    }
}

/// Java `compareTo` (`Double.compare` for floats: -0.0 < 0.0, NaN last).
fn java_compare(a: &V, b: &V) -> std::cmp::Ordering {
    let canon = |x: f64| if x.is_nan() { f64::NAN } else { x };
    match (a, b) {
        (V::F32(x), V::F32(y)) => canon(f64::from(*x)).total_cmp(&canon(f64::from(*y))),
        (V::F64(x), V::F64(y)) => canon(*x).total_cmp(&canon(*y)),
        _ if less(a, b) => std::cmp::Ordering::Less,
        _ if less(b, a) => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Equal,
    }
}

/// The reference state of one group: Flink's accumulator fields.
#[derive(Debug, Clone)]
struct Ref {
    /// MIN/MAX value, SUM/SUM0 sum, AVG sum.
    value: Option<V>,
    /// Counts; for MIN/MAX over retractions `mapSize`.
    count: i64,
    /// MIN/MAX over retractions: the counted values (Flink's MapView).
    map: Vec<(V, i64)>,
}

fn wrap(v: i128, ty: &SqlType) -> i128 {
    match ty {
        SqlType::TinyInt => v as i8 as i128,
        SqlType::SmallInt => v as i16 as i128,
        SqlType::Int => v as i32 as i128,
        _ => v as i64 as i128,
    }
}

/// `a - b` in the sum's arithmetic (DECIMAL: NULL past 38 digits).
fn sub(a: &V, b: &V, ty: &SqlType) -> Option<V> {
    match (a, b) {
        (V::I(x), V::I(y)) => match ty {
            SqlType::Decimal { .. } => x.checked_sub(*y).filter(|s| s.abs() <= MAX_38).map(V::I),
            _ => Some(V::I(wrap(x - y, ty))),
        },
        (V::F32(x), V::F32(y)) => Some(V::F32(x - y)),
        (V::F64(x), V::F64(y)) => Some(V::F64(x - y)),
        _ => panic!("no subtraction"),
    }
}

/// Flink's `0 - x` of the sum's type.
fn zero_minus(v: &V, ty: &SqlType) -> Option<V> {
    match v {
        V::I(_) => sub(&V::I(0), v, ty),
        V::F32(_) => sub(&V::F32(0.0), v, ty),
        V::F64(_) => sub(&V::F64(0.0), v, ty),
        _ => panic!("no subtraction"),
    }
}

fn add(a: &V, b: &V, ty: &SqlType) -> Option<V> {
    match (a, b) {
        (V::I(x), V::I(y)) => match ty {
            SqlType::Decimal { .. } => x.checked_add(*y).filter(|s| s.abs() <= MAX_38).map(V::I),
            _ => Some(V::I(wrap(x + y, ty))),
        },
        (V::F32(x), V::F32(y)) => Some(V::F32(x + y)),
        (V::F64(x), V::F64(y)) => Some(V::F64(x + y)),
        _ => panic!("no addition"),
    }
}

struct Model {
    function: &'static str,
    ty: Option<SqlType>,
    /// Over retracting input (SUM is then SumWithRetractAggFunction).
    retracting: bool,
}

impl Model {
    fn empty(&self) -> Ref {
        let zero = match self.ty {
            Some(SqlType::Float) if self.function == "SUM0" => Some(V::F32(0.0)),
            Some(SqlType::Float | SqlType::Double) => Some(V::F64(0.0)),
            _ => Some(V::I(0)),
        };
        match self.function {
            "SUM0" | "AVG" => Ref {
                value: zero,
                count: 0,
                map: Vec::new(),
            },
            _ => Ref {
                value: None,
                count: 0,
                map: Vec::new(),
            },
        }
    }

    /// The AVG sum type: BIGINT for integers (wrapping in i64), DOUBLE for floats.
    fn avg_add(&self, sum: &V, value: &V) -> Option<V> {
        match (sum, value, self.ty) {
            (V::F64(s), V::F32(v), _) => Some(V::F64(s + f64::from(*v))),
            (V::F64(s), V::F64(v), _) => Some(V::F64(s + v)),
            (V::I(s), V::I(v), Some(SqlType::Decimal { .. })) => {
                s.checked_add(*v).filter(|t| t.abs() <= MAX_38).map(V::I)
            }
            (V::I(s), V::I(v), _) => Some(V::I((s + v) as i64 as i128)),
            _ => panic!("no avg addition"),
        }
    }

    /// AVG's retraction: `sum - value` in the sum type.
    fn avg_sub(&self, sum: &V, value: &V) -> Option<V> {
        match (sum, value, self.ty) {
            (V::F64(s), V::F32(v), _) => Some(V::F64(s - f64::from(*v))),
            (V::F64(s), V::F64(v), _) => Some(V::F64(s - v)),
            (V::I(s), V::I(v), Some(SqlType::Decimal { .. })) => {
                s.checked_sub(*v).filter(|t| t.abs() <= MAX_38).map(V::I)
            }
            (V::I(s), V::I(v), _) => Some(V::I((s - v) as i64 as i128)),
            _ => panic!("no avg subtraction"),
        }
    }

    /// MinWithRetractAggFunction / MaxWithRetractAggFunction, written from
    /// their Java: accumulate (`retract == false`) or retract one value.
    fn counted(&self, state: &mut Ref, v: &V, retract: bool) {
        let min = self.function == "MIN";
        let beats = |a: &V, b: &V| {
            let order = java_compare(a, b);
            if min {
                order.is_lt()
            } else {
                order.is_gt()
            }
        };
        let pos = state
            .map
            .iter()
            .position(|(k, _)| java_compare(k, v).is_eq());
        let old = pos.map_or(0, |p| state.map[p].1);
        if !retract && (state.count == 0 || beats(v, state.value.as_ref().unwrap())) {
            state.value = Some(v.clone());
        }
        let count = if retract { old - 1 } else { old + 1 };
        match (pos, count) {
            (Some(p), 0) => {
                state.map.remove(p);
            }
            (Some(p), c) => state.map[p].1 = c,
            (None, 0) => {}
            (None, c) => state.map.push((v.clone(), c)),
        }
        if !retract {
            if count == 1 {
                state.count += 1;
            }
            return;
        }
        if count != 0 {
            return;
        }
        state.count -= 1;
        if state.count == 0 {
            state.value = None;
            return;
        }
        if state
            .value
            .as_ref()
            .is_some_and(|cur| java_compare(cur, v).is_eq())
        {
            let mut next: Option<V> = None;
            for (k, _) in &state.map {
                if next.as_ref().is_none_or(|n| beats(k, n)) {
                    next = Some(k.clone());
                }
            }
            if next.is_none() {
                state.count = 0;
            }
            state.value = next;
        }
    }

    /// Retracts one row (-U/-D) as Flink's retract expressions do.
    fn unfold(&self, state: &mut Ref, value: &Option<V>) {
        let ty = self.ty.as_ref();
        match self.function {
            "COUNT_STAR" => state.count -= 1,
            "COUNT" => state.count -= value.is_some() as i64,
            _ => {
                let Some(v) = value else { return };
                match self.function {
                    "MIN" | "MAX" => self.counted(state, v, true),
                    "SUM" => {
                        state.value = match &state.value {
                            None => zero_minus(v, ty.unwrap()),
                            Some(cur) => sub(cur, v, ty.unwrap()),
                        };
                        state.count -= 1;
                    }
                    "SUM0" => {
                        state.value = state
                            .value
                            .as_ref()
                            .and_then(|cur| sub(cur, v, ty.unwrap()))
                    }
                    "AVG" => {
                        state.value = state.value.as_ref().and_then(|cur| self.avg_sub(cur, v));
                        state.count -= 1;
                    }
                    other => panic!("{other} does not retract"),
                }
            }
        }
    }

    fn fold(&self, state: &mut Ref, value: &Option<V>) {
        let ty = self.ty.as_ref();
        match self.function {
            "COUNT_STAR" => state.count += 1,
            "COUNT" => state.count += value.is_some() as i64,
            _ => {
                let Some(v) = value else { return };
                match self.function {
                    "MIN" | "MAX" if self.retracting => self.counted(state, v, false),
                    "MIN" | "MAX" => {
                        let take = match &state.value {
                            None => true,
                            Some(cur) if self.function == "MIN" => less(v, cur),
                            Some(cur) => less(cur, v),
                        };
                        if take {
                            state.value = Some(v.clone());
                        }
                    }
                    "SUM" => {
                        state.value = match &state.value {
                            None => Some(v.clone()),
                            Some(cur) => add(cur, v, ty.unwrap()),
                        };
                        state.count += 1;
                    }
                    "SUM0" => {
                        state.value = state
                            .value
                            .as_ref()
                            .and_then(|cur| add(cur, v, ty.unwrap()))
                    }
                    "AVG" => {
                        state.value = state.value.as_ref().and_then(|cur| self.avg_add(cur, v));
                        state.count += 1;
                    }
                    other => panic!("unknown function {other}"),
                }
            }
        }
    }

    fn merge(&self, state: &mut Ref, partial: &Ref) {
        let ty = self.ty.as_ref();
        match self.function {
            "COUNT_STAR" | "COUNT" => state.count += partial.count,
            "MIN" | "MAX" => self.fold(state, &partial.value),
            "SUM" => {
                if let Some(p) = &partial.value {
                    state.value = match &state.value {
                        None => Some(p.clone()),
                        Some(cur) => add(cur, p, ty.unwrap()),
                    }
                }
                state.count += partial.count;
            }
            "SUM0" => {
                state.value = match (&state.value, &partial.value) {
                    (Some(cur), Some(p)) => add(cur, p, ty.unwrap()),
                    _ => None,
                }
            }
            "AVG" => {
                state.value = match (&state.value, &partial.value) {
                    (Some(V::F64(a)), Some(V::F64(b))) => Some(V::F64(a + b)),
                    (Some(V::I(a)), Some(V::I(b))) => match ty {
                        Some(SqlType::Decimal { .. }) => {
                            a.checked_add(*b).filter(|t| t.abs() <= MAX_38).map(V::I)
                        }
                        _ => Some(V::I((a + b) as i64 as i128)),
                    },
                    _ => None,
                };
                state.count += partial.count;
            }
            other => panic!("unknown function {other}"),
        }
    }

    fn result(&self, state: &Ref) -> Option<V> {
        match self.function {
            "COUNT_STAR" | "COUNT" => Some(V::I(state.count.into())),
            "SUM" if self.retracting && state.count == 0 => None,
            "MIN" | "MAX" if self.retracting && state.count <= 0 => None,
            "AVG" => {
                if state.count == 0 {
                    return None;
                }
                let n = state.count;
                match (state.value.as_ref()?, self.ty.unwrap()) {
                    (V::F64(s), SqlType::Float) => Some(V::F32((s / n as f64) as f32)),
                    (V::F64(s), _) => Some(V::F64(s / n as f64)),
                    (V::I(s), SqlType::Decimal { scale, .. }) => {
                        avg_38(*s, n, scale, scale.max(6)).map(V::I)
                    }
                    (V::I(s), ty) => Some(V::I(wrap(((*s as i64) / n) as i128, &ty))),
                    _ => panic!("bad avg state"),
                }
            }
            _ => state.value.clone(),
        }
    }
}

fn model_of(admission: &Admission) -> Model {
    let function = match admission.function {
        "MIN" => "MIN",
        "MAX" => "MAX",
        "COUNT_STAR" => "COUNT_STAR",
        "COUNT" => "COUNT",
        "SUM" => "SUM",
        "SUM0" => "SUM0",
        "AVG" => "AVG",
        other => panic!("no reference model for {other}"),
    };
    Model {
        function,
        ty: admission.type_row.map(sql_type),
        retracting: admission.input == InputMode::Retracting,
    }
}

/// One random input batch.
struct Batch {
    values: Vec<Option<V>>,
    groups: Vec<u32>,
    filter: Option<Vec<Option<bool>>>,
    /// Row kinds (retracting specializations only).
    kinds: Option<Vec<i8>>,
}

impl Batch {
    fn counts(&self, i: usize) -> bool {
        self.filter.as_ref().is_none_or(|f| f[i] == Some(true))
    }

    fn retracts(&self, i: usize) -> bool {
        self.kinds.as_ref().is_some_and(|k| k[i] & 1 == 1)
    }
}

/// Folds row `i` of `batch` into `state`, retracting -U/-D rows.
fn fold_row(model: &Model, state: &mut Ref, batch: &Batch, i: usize) {
    if !batch.counts(i) {
        return;
    }
    if batch.retracts(i) {
        model.unfold(state, &batch.values[i]);
    } else {
        model.fold(state, &batch.values[i]);
    }
}

fn random_batches(
    rng: &mut Rng,
    ty: Option<&SqlType>,
    groups: u32,
    retracting: bool,
) -> Vec<Batch> {
    (0..1 + rng.below(4))
        .map(|_| {
            let n = rng.below(40) as usize;
            let values = (0..n)
                .map(|_| match ty {
                    Some(ty) if rng.below(8) != 0 => Some(random_value(rng, ty)),
                    Some(_) => None,
                    None => Some(V::B(true)),
                })
                .collect();
            let groups = (0..n).map(|_| rng.below(groups as u64) as u32).collect();
            let filter = (rng.below(3) == 0).then(|| {
                (0..n)
                    .map(|_| match rng.below(8) {
                        0 => None,
                        1 | 2 => Some(false),
                        _ => Some(true),
                    })
                    .collect()
            });
            let kinds = retracting.then(|| {
                (0..n)
                    .map(|_| match rng.below(6) {
                        0 => 1,
                        1 => 3,
                        2 => 2,
                        _ => 0,
                    })
                    .collect()
            });
            Batch {
                values,
                groups,
                filter,
                kinds,
            }
        })
        .collect()
}

fn args_of(batch: &Batch, ty: Option<&SqlType>, arg_type: Option<&DataType>) -> Vec<ArrayRef> {
    match (ty, arg_type) {
        (Some(_), Some(dt)) => vec![to_array(&batch.values, dt)],
        _ => vec![],
    }
}

fn arrow_type(ty: &SqlType) -> DataType {
    match ty {
        SqlType::TinyInt => DataType::Int8,
        SqlType::SmallInt => DataType::Int16,
        SqlType::Int => DataType::Int32,
        SqlType::BigInt => DataType::Int64,
        SqlType::Float => DataType::Float32,
        SqlType::Double => DataType::Float64,
        SqlType::Decimal { precision, scale } => DataType::Decimal128(*precision, *scale),
        SqlType::Date => DataType::Date32,
        SqlType::Time { .. } => DataType::Time32(TimeUnit::Millisecond),
        SqlType::Timestamp { precision: 0..=3 } => DataType::Timestamp(TimeUnit::Millisecond, None),
        SqlType::Timestamp { .. } => timestamp_struct_type(),
        SqlType::Boolean => DataType::Boolean,
        SqlType::Char { .. } | SqlType::Varchar { .. } => DataType::Utf8,
    }
}

fn filter_array(batch: &Batch) -> Option<BooleanArray> {
    batch.filter.as_ref().map(|f| BooleanArray::from(f.clone()))
}

fn apply(
    acc: &mut dyn GroupAccumulator,
    batch: &Batch,
    args: &[ArrayRef],
    filter: Option<&BooleanArray>,
) {
    acc.update(&BatchUpdate {
        args,
        group_ids: &batch.groups,
        filter,
        row_kinds: batch.kinds.as_deref(),
    })
    .unwrap();
}

fn check_results(name: &str, what: &str, got: &ArrayRef, want: &[Option<V>]) {
    let got = from_array(got);
    assert_eq!(got.len(), want.len(), "{name} {what}: length");
    for (g, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            identical(a, b),
            "{name} {what}: group {g} got {a:?}, reference {b:?}"
        );
    }
}

fn run_one(admission: &'static Admission, seed: u64) {
    let name_hash = admission
        .name
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    let mut rng = Rng(seed ^ name_hash);
    let model = model_of(admission);
    let ty = model.ty;
    let arg_type = ty.as_ref().map(arrow_type);
    let groups = 1 + rng.below(6) as u32;
    let batches = random_batches(&mut rng, ty.as_ref(), groups, model.retracting);
    let all: Vec<u32> = (0..groups).collect();
    let name = admission.name;

    // Reference, single phase, with per-row results and changed flags.
    let mut reference: Vec<Ref> = (0..groups).map(|_| model.empty()).collect();
    let mut traced_reference = Vec::new();
    for batch in &batches {
        let mut rows = Vec::new();
        for (i, &g) in batch.groups.iter().enumerate() {
            let state = &mut reference[g as usize];
            let before = model.result(state);
            fold_row(&model, state, batch, i);
            let after = model.result(state);
            rows.push((after.clone(), !java_equal(&before, &after)));
        }
        traced_reference.push(rows);
    }
    let want: Vec<Option<V>> = reference.iter().map(|s| model.result(s)).collect();

    // (a) single phase, plus traced updates on a second accumulator.
    if admission.phases.contains(&Phase::Single) {
        let mut acc = admission.create(ty.as_ref()).unwrap();
        let mut traced = admission.create(ty.as_ref()).unwrap();
        acc.resize(groups as usize);
        traced.resize(groups as usize);
        for (batch, rows) in batches.iter().zip(&traced_reference) {
            let args = args_of(batch, ty.as_ref(), arg_type.as_ref());
            let filter = filter_array(batch);
            apply(acc.as_mut(), batch, &args, filter.as_ref());
            let mut changed = vec![false; batch.groups.len()];
            let out = traced
                .update_traced(
                    &BatchUpdate {
                        args: &args,
                        group_ids: &batch.groups,
                        filter: filter.as_ref(),
                        row_kinds: batch.kinds.as_deref(),
                    },
                    &mut changed,
                )
                .unwrap();
            let per_row: Vec<Option<V>> = rows.iter().map(|r| r.0.clone()).collect();
            check_results(name, "traced rows", &out, &per_row);
            let flags: Vec<bool> = rows.iter().map(|r| r.1).collect();
            assert_eq!(changed, flags, "{name}: changed flags");
        }
        check_results(name, "single phase", &acc.evaluate(&all).unwrap(), &want);
        check_results(name, "traced final", &traced.evaluate(&all).unwrap(), &want);

        // (c) snapshot -> restore into a fresh accumulator.
        let snapshot = acc.snapshot(&all).unwrap();
        let mut fresh = admission.create(ty.as_ref()).unwrap();
        fresh.resize(groups as usize);
        fresh.restore(&snapshot, &all).unwrap();
        check_results(name, "restored", &fresh.evaluate(&all).unwrap(), &want);
        // and it keeps folding identically
        assert_eq!(fresh.state_types(), acc.state_types());
    }

    // (b) local bundles merged by a global accumulator.
    if admission.phases.contains(&Phase::Local) && admission.phases.contains(&Phase::Global) {
        let mut local = admission.create(ty.as_ref()).unwrap();
        let mut global = admission.create(ty.as_ref()).unwrap();
        global.resize(groups as usize);
        let mut reference: Vec<Ref> = (0..groups).map(|_| model.empty()).collect();
        // split the batch sequence into bundles at random batch boundaries
        let mut bundle: Vec<Ref> = (0..groups).map(|_| model.empty()).collect();
        local.resize(groups as usize);
        for (b, batch) in batches.iter().enumerate() {
            let args = args_of(batch, ty.as_ref(), arg_type.as_ref());
            let filter = filter_array(batch);
            apply(local.as_mut(), batch, &args, filter.as_ref());
            for (i, &g) in batch.groups.iter().enumerate() {
                fold_row(&model, &mut bundle[g as usize], batch, i);
            }
            let last = b + 1 == batches.len();
            if last || rng.below(2) == 0 {
                let partials = local.partials(&all).unwrap();
                assert_eq!(
                    partials
                        .iter()
                        .map(|p| p.data_type().clone())
                        .collect::<Vec<_>>(),
                    local.partial_types(),
                    "{name}: partial types"
                );
                global.merge(&partials, &all).unwrap();
                for (g, partial) in bundle.iter().enumerate() {
                    model.merge(&mut reference[g], partial);
                }
                local.reset();
                local.resize(groups as usize);
                bundle = (0..groups).map(|_| model.empty()).collect();
            }
        }
        let want: Vec<Option<V>> = reference.iter().map(|s| model.result(s)).collect();
        check_results(name, "local/global", &global.evaluate(&all).unwrap(), &want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_specialization_matches_the_reference(seed in any::<u64>()) {
        for admission in registry::all() {
            run_one(admission, seed);
        }
    }
}

#[test]
fn the_registry_is_not_empty() {
    assert!(registry::all().len() > 50);
}
