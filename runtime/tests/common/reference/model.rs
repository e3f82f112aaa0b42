//! The reference model of `reference_model.rs`: values as the model holds
//! them, Flink's orders and equalities, and one group's state folded,
//! retracted and merged the obvious way (written from Flink's Java).

use aggforge_runtime::kernel::decimal::{avg_38, MAX_38};
use aggforge_runtime::registry::Admission;
use aggforge_runtime::types::{InputMode, Layout, SqlType};

/// One value as the reference model holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    I(i128),
    F32(f32),
    F64(f64),
    B(bool),
    S(Vec<u8>),
    T(i64, i32),
    /// An ARRAY value: its elements, NULL ones included.
    L(Vec<Option<V>>),
}

/// The SQL type the test uses for each type row (DECIMAL at the row's
/// largest precision, so its values reach 18 and 38 digits).
pub fn sql_type(row: &str) -> SqlType {
    aggforge_runtime::sql_type::type_rows()
        .iter()
        .find(|r| r.name == row)
        .unwrap_or_else(|| panic!("no type row {row}"))
        .example()
}

/// Same value, NaN equal to NaN (for comparing results).
pub fn identical(a: &Option<V>, b: &Option<V>) -> bool {
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
pub fn java_equal(a: &Option<V>, b: &Option<V>) -> bool {
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
        // ARRAY: no Java order, only BinaryArrayData equality (element by
        // element, NULL elements equal); any consistent order serves.
        (V::L(x), V::L(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(x, y)| match (x, y) {
                    (Some(x), Some(y)) => java_compare(x, y),
                    _ => x.is_some().cmp(&y.is_some()),
                })
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        }),
        _ if less(a, b) => std::cmp::Ordering::Less,
        _ if less(b, a) => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Equal,
    }
}

/// The reference state of one group: Flink's accumulator fields.
#[derive(Debug, Clone)]
pub struct Ref {
    /// MIN/MAX value, SUM/SUM0 sum, AVG sum.
    value: Option<V>,
    /// Counts; for MIN/MAX over retractions `mapSize`.
    count: i64,
    /// MIN/MAX over retractions: the counted values (Flink's MapView);
    /// FIRST_VALUE/LAST_VALUE over retractions: the live values in arrival
    /// order (count unused).
    map: Vec<(V, i64)>,
    /// DISTINCT: each value seen and its multiplicity (Flink's distinct
    /// MapView), compared as boxed Java values.
    view: Vec<(V, i64)>,
    /// SINGLE_VALUE: a row failed the group (Flink throws there); later
    /// rows leave it as it is.
    failed: bool,
    /// LISTAGG over retractions: retracted values that were not live
    /// (Flink's `retractList`, read by its merge).
    retracted: Vec<V>,
}

impl Ref {
    /// Whether a row failed the group (SINGLE_VALUE).
    pub fn failed(&self) -> bool {
        self.failed
    }
}

/// Adds `delta` to `v`'s count in the DISTINCT view (a count of 0
/// removes the entry) and returns the count before.
fn bump_view(state: &mut Ref, v: &V, delta: i64) -> i64 {
    match state.view.iter().position(|(k, _)| boxed_equal(k, v)) {
        Some(at) => {
            let before = state.view[at].1;
            state.view[at].1 += delta;
            if state.view[at].1 == 0 {
                state.view.remove(at);
            }
            before
        }
        None => {
            state.view.push((v.clone(), delta));
            0
        }
    }
}

/// Java's boxed `equals`: floats by `doubleToLongBits` (NaNs one value,
/// 0.0 and -0.0 different), the rest by value.
fn boxed_equal(a: &V, b: &V) -> bool {
    let bits = |x: f64| {
        if x.is_nan() {
            f64::NAN.to_bits()
        } else {
            x.to_bits()
        }
    };
    match (a, b) {
        (V::F32(x), V::F32(y)) => bits(f64::from(*x)) == bits(f64::from(*y)),
        (V::F64(x), V::F64(y)) => bits(*x) == bits(*y),
        _ => a == b,
    }
}

fn wrap(v: i128, ty: &SqlType) -> i128 {
    match ty.layout() {
        Some(Layout::Int8) => v as i8 as i128,
        Some(Layout::Int16) => v as i16 as i128,
        Some(Layout::Int32) => v as i32 as i128,
        _ => v as i64 as i128,
    }
}

/// `a - b` in the sum's arithmetic (DECIMAL: NULL past 38 digits).
fn sub(a: &V, b: &V, ty: &SqlType) -> Option<V> {
    match (a, b) {
        (V::I(x), V::I(y)) => match ty.layout() {
            Some(Layout::Decimal128) => x.checked_sub(*y).filter(|s| s.abs() <= MAX_38).map(V::I),
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
        (V::I(x), V::I(y)) => match ty.layout() {
            Some(Layout::Decimal128) => x.checked_add(*y).filter(|s| s.abs() <= MAX_38).map(V::I),
            _ => Some(V::I(wrap(x + y, ty))),
        },
        (V::F32(x), V::F32(y)) => Some(V::F32(x + y)),
        (V::F64(x), V::F64(y)) => Some(V::F64(x + y)),
        _ => panic!("no addition"),
    }
}

/// The reference of one specialization.
pub struct Model {
    function: &'static str,
    pub ty: Option<SqlType>,
    /// Over retracting input (SUM is then SumWithRetractAggFunction).
    pub retracting: bool,
    /// AGG(DISTINCT x): values pass through the distinct view.
    pub distinct: bool,
}

impl Model {
    /// Folds (or, `retract`, retracts) one row's value: directly, or for
    /// DISTINCT through the view, as Flink's DistinctAggCodeGen does (an
    /// insert accumulates when its count was 0, a retraction retracts when
    /// its count was 1; a count of 0 removes the entry; NULLs, which every
    /// inner aggregate ignores, are left out of the view).
    pub fn apply(&self, state: &mut Ref, value: &Option<V>, retract: bool) {
        if !self.distinct {
            if retract {
                self.unfold(state, value);
            } else {
                self.fold(state, value);
            }
            return;
        }
        let Some(v) = value else { return };
        let before = bump_view(state, v, if retract { -1 } else { 1 });
        if !retract && before == 0 {
            self.fold(state, value);
        } else if retract && before == 1 {
            self.unfold(state, value);
        }
    }

    /// DISTINCT in the global phase: adds each count of a partial's view,
    /// as Flink's distinct merge does (a value enters the set when its
    /// count goes from <= 0 to > 0, leaves it from > 0 to <= 0).
    fn merge_view(&self, state: &mut Ref, partial: &Ref) {
        for (v, delta) in &partial.view {
            let before = bump_view(state, v, *delta);
            let after = before + delta;
            if before <= 0 && after > 0 {
                self.fold(state, &Some(v.clone()));
            } else if before > 0 && after <= 0 {
                self.unfold(state, &Some(v.clone()));
            }
        }
    }

    pub fn empty(&self) -> Ref {
        let zero = match self.ty.and_then(|t| t.layout()) {
            Some(Layout::Float32) if self.function == "SUM0" => Some(V::F32(0.0)),
            Some(Layout::Float32 | Layout::Float64) => Some(V::F64(0.0)),
            _ => Some(V::I(0)),
        };
        match self.function {
            "SUM0" | "AVG" => Ref {
                value: zero,
                count: 0,
                map: Vec::new(),
                view: Vec::new(),
                failed: false,
                retracted: Vec::new(),
            },
            _ => Ref {
                value: None,
                count: 0,
                map: Vec::new(),
                view: Vec::new(),
                failed: false,
                retracted: Vec::new(),
            },
        }
    }

    /// The AVG sum type: BIGINT for integers (wrapping in i64), DOUBLE for floats.
    fn avg_add(&self, sum: &V, value: &V) -> Option<V> {
        match (sum, value, self.ty) {
            (V::F64(s), V::F32(v), _) => Some(V::F64(s + f64::from(*v))),
            (V::F64(s), V::F64(v), _) => Some(V::F64(s + v)),
            (V::I(s), V::I(v), Some(ty)) if ty.layout() == Some(Layout::Decimal128) => {
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
            (V::I(s), V::I(v), Some(ty)) if ty.layout() == Some(Layout::Decimal128) => {
                s.checked_sub(*v).filter(|t| t.abs() <= MAX_38).map(V::I)
            }
            (V::I(s), V::I(v), _) => Some(V::I((s - v) as i64 as i128)),
            _ => panic!("no avg subtraction"),
        }
    }

    /// `a` is a better MIN/MAX than `b` under Java's `compareTo`.
    fn beats(&self, a: &V, b: &V) -> bool {
        let order = java_compare(a, b);
        if self.function == "MIN" {
            order.is_lt()
        } else {
            order.is_gt()
        }
    }

    /// Flink's `updateMin`/`updateMax`: the extreme over every key, negative
    /// counts too; none zeroes `mapSize`.
    fn update_extreme(&self, state: &mut Ref) {
        let mut next: Option<V> = None;
        for (k, _) in &state.map {
            if next.as_ref().is_none_or(|n| self.beats(k, n)) {
                next = Some(k.clone());
            }
        }
        if next.is_none() {
            state.count = 0;
        }
        state.value = next;
    }

    /// MinWithRetractAggFunction.merge / MaxWithRetractAggFunction.merge,
    /// written from their Java, for one partial accumulator.
    fn merge_counted(&self, state: &mut Ref, partial: &Ref) {
        let beats = |a: &V, b: &V| self.beats(a, b);
        if state.count == 0
            || (partial.count > 0
                && partial.value.is_some()
                && beats(
                    partial.value.as_ref().unwrap(),
                    state.value.as_ref().unwrap(),
                ))
        {
            state.value = partial.value.clone();
        }
        let mut update = false;
        for (key, other) in &partial.map {
            let pos = state
                .map
                .iter()
                .position(|(k, _)| java_compare(k, key).is_eq());
            let this = pos.map_or(0, |p| state.map[p].1);
            let merged = other + this;
            let is_min = state
                .value
                .as_ref()
                .is_some_and(|m| java_compare(m, key).is_eq());
            if merged <= 0 && this > 0 {
                state.count -= 1;
                update |= is_min;
            } else if merged > 0 && this <= 0 {
                state.count += 1;
            }
            match (pos, merged) {
                (Some(p), 0) => {
                    state.map.remove(p);
                }
                (Some(p), m) => state.map[p].1 = m,
                (None, 0) => {}
                (None, m) => state.map.push((key.clone(), m)),
            }
        }
        if update {
            self.update_extreme(state);
        }
    }

    /// MinWithRetractAggFunction / MaxWithRetractAggFunction, written from
    /// their Java: accumulate (`retract == false`) or retract one value.
    fn counted(&self, state: &mut Ref, v: &V, retract: bool) {
        let beats = |a: &V, b: &V| self.beats(a, b);
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
            self.update_extreme(state);
        }
    }

    /// Retracts one row (-U/-D) as Flink's retract expressions do.
    pub fn unfold(&self, state: &mut Ref, value: &Option<V>) {
        let ty = self.ty.as_ref();
        match self.function {
            // SingleValueAggFunction: NULL if the count is 0 or 1, else throw.
            "SINGLE_VALUE" if state.failed => {}
            "SINGLE_VALUE" if state.count == 0 || state.count == 1 => {
                state.value = None;
                state.count -= 1;
            }
            "SINGLE_VALUE" => state.failed = true,
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
                    // The earliest live arrival of a value Java `equals` it;
                    // LISTAGG: `List.remove`, the first equal live value.
                    "FIRST_VALUE" | "LAST_VALUE" | "LISTAGG" => {
                        if let Some(p) = state
                            .map
                            .iter()
                            .position(|(k, _)| java_compare(k, v).is_eq())
                        {
                            state.map.remove(p);
                        } else if self.function == "LISTAGG" {
                            state.retracted.push(v.clone());
                        }
                    }
                    other => panic!("{other} does not retract"),
                }
            }
        }
    }

    pub fn fold(&self, state: &mut Ref, value: &Option<V>) {
        let ty = self.ty.as_ref();
        match self.function {
            // SingleValueAggFunction: the value (NULL counts) if the count
            // is 0 or less, else throw.
            "SINGLE_VALUE" if state.failed => {}
            "SINGLE_VALUE" if state.count > 0 => state.failed = true,
            "SINGLE_VALUE" => {
                state.value = value.clone();
                state.count += 1;
            }
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
                    // First/LastValueWithRetractAggFunction: the live values
                    // in arrival order.
                    "FIRST_VALUE" | "LAST_VALUE" if self.retracting => {
                        state.map.push((v.clone(), 1))
                    }
                    // FirstValueAggFunction: the first non-NULL value stays.
                    "FIRST_VALUE" => {
                        if state.value.is_none() {
                            state.value = Some(v.clone());
                        }
                    }
                    // LastValueAggFunction: every non-NULL value replaces it.
                    "LAST_VALUE" => state.value = Some(v.clone()),
                    // ListAggWithRetractAggFunction: the live values in order.
                    "LISTAGG" if self.retracting => state.map.push((v.clone(), 1)),
                    // ListAggFunction: `acc , value`, or the value first.
                    "LISTAGG" => {
                        state.value = Some(match (&state.value, v) {
                            (Some(V::S(acc)), V::S(v)) => V::S([&acc[..], b",", v].concat()),
                            _ => v.clone(),
                        })
                    }
                    other => panic!("unknown function {other}"),
                }
            }
        }
    }

    pub fn merge(&self, state: &mut Ref, partial: &Ref) {
        if self.distinct {
            return self.merge_view(state, partial);
        }
        let ty = self.ty.as_ref();
        match self.function {
            "COUNT_STAR" | "COUNT" => state.count += partial.count,
            "MIN" | "MAX" if self.retracting => self.merge_counted(state, partial),
            // SingleValueAggFunction's merge expressions: throw above 1;
            // at 0 the partial's value if ours was 0 or theirs is above 0,
            // else NULL; otherwise the partial's value.
            "SINGLE_VALUE" if state.failed || partial.failed => state.failed = true,
            "SINGLE_VALUE" => {
                let sum = state.count + partial.count;
                if sum > 1 {
                    state.failed = true;
                    return;
                }
                let take = sum != 0 || state.count == 0 || partial.count > 0;
                state.value = if take { partial.value.clone() } else { None };
                state.count = sum;
            }
            // ListAggWithRetractAggFunction.merge: skip an empty partial;
            // else concatenate the lists and the retractLists, then each
            // retracted value removes the first equal listed one or stays.
            "LISTAGG" if self.retracting => {
                if partial.map.is_empty() && partial.retracted.is_empty() {
                    return;
                }
                let mut buffer = state.map.clone();
                buffer.extend(partial.map.iter().cloned());
                let mut still = Vec::new();
                for r in state.retracted.iter().chain(&partial.retracted) {
                    match buffer.iter().position(|(k, _)| java_compare(k, r).is_eq()) {
                        Some(p) => {
                            buffer.remove(p);
                        }
                        None => still.push(r.clone()),
                    }
                }
                state.map = buffer;
                state.retracted = still;
            }
            // LISTAGG merges the partial concatenation after its separator.
            "MIN" | "MAX" | "LISTAGG" => self.fold(state, &partial.value),
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
                        Some(ty) if ty.layout() == Some(Layout::Decimal128) => {
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

    pub fn result(&self, state: &Ref) -> Option<V> {
        match self.function {
            "COUNT_STAR" | "COUNT" => Some(V::I(state.count.into())),
            "SUM" if self.retracting && state.count == 0 => None,
            "MIN" | "MAX" if self.retracting && state.count <= 0 => None,
            "FIRST_VALUE" if self.retracting => state.map.first().map(|(v, _)| v.clone()),
            "LAST_VALUE" if self.retracting => state.map.last().map(|(v, _)| v.clone()),
            "LISTAGG" if self.retracting => {
                let parts: Vec<&[u8]> = state
                    .map
                    .iter()
                    .map(|(v, _)| match v {
                        V::S(s) => &s[..],
                        _ => panic!("LISTAGG over a non-string"),
                    })
                    .collect();
                (!parts.is_empty()).then(|| V::S(parts.join(&b","[..])))
            }
            "AVG" => {
                if state.count == 0 {
                    return None;
                }
                let n = state.count;
                match (state.value.as_ref()?, self.ty.unwrap()) {
                    (V::F64(s), ty) if ty.layout() == Some(Layout::Float32) => {
                        Some(V::F32((s / n as f64) as f32))
                    }
                    (V::F64(s), _) => Some(V::F64(s / n as f64)),
                    (V::I(s), ty) if ty.layout() == Some(Layout::Decimal128) => {
                        let scale = ty.scale().unwrap();
                        avg_38(*s, n, scale, scale.max(6)).map(V::I)
                    }
                    // Java's long division: Long.MIN_VALUE / -1 wraps.
                    (V::I(s), ty) => Some(V::I(wrap((*s as i64).wrapping_div(n).into(), &ty))),
                    _ => panic!("bad avg state"),
                }
            }
            _ => state.value.clone(),
        }
    }
}

pub fn model_of(admission: &Admission) -> Model {
    let function = match admission.function {
        "MIN" => "MIN",
        "MAX" => "MAX",
        "COUNT_STAR" => "COUNT_STAR",
        "COUNT" => "COUNT",
        "SUM" => "SUM",
        "SUM0" => "SUM0",
        "AVG" => "AVG",
        "FIRST_VALUE" => "FIRST_VALUE",
        "LAST_VALUE" => "LAST_VALUE",
        "LISTAGG" => "LISTAGG",
        "SINGLE_VALUE" => "SINGLE_VALUE",
        other => panic!("no reference model for {other}"),
    };
    Model {
        function,
        ty: admission.type_row.map(sql_type),
        retracting: admission.input == InputMode::Retracting,
        distinct: admission.distinct,
    }
}
