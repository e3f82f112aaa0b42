//! Per-template tests of the generated accumulators, aimed at the places
//! where Flink's semantics differ from the obvious ones.

use std::sync::Arc;

use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::error::AggError;
use aggforge_runtime::kernel::decimal::MAX_38;
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type, Int8Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Float32Array, Float64Array, Int32Array,
    Int64Array, Int8Array, StringArray, StructArray,
};
use arrow_schema::DataType;

fn acc(function: &str, ty: Option<&str>) -> Box<dyn GroupAccumulator> {
    let arg: Option<SqlType> = ty.map(|t| t.parse().unwrap());
    registry::lookup(
        function,
        arg.as_ref(),
        Phase::Single,
        InputMode::InsertOnly,
        false,
    )
    .unwrap()
    .create(arg.as_ref())
    .unwrap()
}

fn update(acc: &mut dyn GroupAccumulator, args: Vec<ArrayRef>, groups: &[u32]) {
    update_with(acc, args, groups, None, None).unwrap();
}

fn update_with(
    acc: &mut dyn GroupAccumulator,
    args: Vec<ArrayRef>,
    groups: &[u32],
    filter: Option<&BooleanArray>,
    row_kinds: Option<&[i8]>,
) -> Result<(), AggError> {
    let need = groups.iter().max().map(|&g| g as usize + 1).unwrap_or(0);
    if acc.num_groups() < need {
        acc.resize(need);
    }
    acc.update(&BatchUpdate {
        args: &args,
        group_ids: groups,
        filter,
        row_kinds,
        distinct: None,
    })
}

fn eval(acc: &dyn GroupAccumulator) -> ArrayRef {
    let groups: Vec<u32> = (0..acc.num_groups() as u32).collect();
    acc.evaluate(&groups).unwrap()
}

fn f64s(values: &[Option<f64>]) -> ArrayRef {
    Arc::new(Float64Array::from(values.to_vec()))
}

fn decimals(values: &[Option<i128>], p: u8, s: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(values.to_vec())
            .with_precision_and_scale(p, s)
            .unwrap(),
    )
}

#[test]
fn min_max_float_nan_first_stays_and_later_never_replaces() {
    for function in ["MIN", "MAX"] {
        let mut a = acc(function, Some("DOUBLE"));
        // group 0: NaN first; group 1: NaN later
        update(
            a.as_mut(),
            vec![f64s(&[
                Some(f64::NAN),
                Some(1.0),
                Some(1.0),
                Some(f64::NAN),
            ])],
            &[0, 0, 1, 1],
        );
        let out = eval(a.as_ref());
        let out = out.as_primitive::<Float64Type>();
        assert!(out.value(0).is_nan(), "{function}: a NaN first stays");
        assert_eq!(out.value(1), 1.0, "{function}: a NaN later never replaces");
    }
}

#[test]
fn min_max_signed_zero_keeps_the_first() {
    for function in ["MIN", "MAX"] {
        let mut a = acc(function, Some("FLOAT"));
        let values: ArrayRef = Arc::new(Float32Array::from(vec![0.0f32, -0.0, -0.0, 0.0]));
        update(a.as_mut(), vec![values], &[0, 0, 1, 1]);
        let out = eval(a.as_ref());
        let out = out.as_primitive::<Float32Type>();
        assert!(
            out.value(0).is_sign_positive(),
            "{function}: 0.0 first kept"
        );
        assert!(
            out.value(1).is_sign_negative(),
            "{function}: -0.0 first kept"
        );
    }
}

#[test]
fn min_max_strings_compare_unsigned_bytes_and_booleans_false_first() {
    let mut min = acc("MIN", Some("STRING"));
    let mut max = acc("MAX", Some("STRING"));
    let values: ArrayRef = Arc::new(StringArray::from(vec![
        Some("z"),
        Some("é"),
        None,
        Some("a"),
    ]));
    update(min.as_mut(), vec![values.clone()], &[0, 0, 0, 1]);
    update(max.as_mut(), vec![values], &[0, 0, 0, 1]);
    assert_eq!(eval(min.as_ref()).as_string::<i32>().value(0), "z");
    assert_eq!(eval(max.as_ref()).as_string::<i32>().value(0), "é");
    assert_eq!(eval(max.as_ref()).as_string::<i32>().value(1), "a");

    let mut min = acc("MIN", Some("BOOLEAN"));
    let mut max = acc("MAX", Some("BOOLEAN"));
    let values: ArrayRef = Arc::new(BooleanArray::from(vec![true, false, true]));
    update(min.as_mut(), vec![values.clone()], &[0, 0, 1]);
    update(max.as_mut(), vec![values], &[0, 0, 1]);
    let lo = eval(min.as_ref());
    let hi = eval(max.as_ref());
    assert!(!lo.as_boolean().value(0) && lo.as_boolean().value(1));
    assert!(hi.as_boolean().value(0) && hi.as_boolean().value(1));
}

#[test]
fn min_timestamp_9_orders_millis_then_nanos() {
    let mut a = acc("MIN", Some("TIMESTAMP(9)"));
    assert_eq!(
        a.result_type(),
        aggforge_runtime::kernel::timestamp_struct_type()
    );
    let millis: ArrayRef = Arc::new(Int64Array::from(vec![5, 5, 4, 7]));
    let nanos: ArrayRef = Arc::new(Int32Array::from(vec![300, 200, 999_999, 0]));
    let DataType::Struct(fields) = aggforge_runtime::kernel::timestamp_struct_type() else {
        unreachable!()
    };
    let ts: ArrayRef = Arc::new(StructArray::new(fields, vec![millis, nanos], None));
    update(a.as_mut(), vec![ts], &[0, 0, 1, 1]);
    let out = eval(a.as_ref());
    let out = out.as_struct();
    let millis = out.column(0).as_primitive::<Int64Type>();
    let nanos = out.column(1).as_primitive::<Int32Type>();
    assert_eq!((millis.value(0), nanos.value(0)), (5, 200));
    assert_eq!((millis.value(1), nanos.value(1)), (4, 999_999));
}

#[test]
fn integer_sum_wraps_in_the_input_type() {
    let mut a = acc("SUM", Some("TINYINT"));
    let values: ArrayRef = Arc::new(Int8Array::from(vec![100i8, 100, -128, -1]));
    update(a.as_mut(), vec![values], &[0, 0, 1, 1]);
    let out = eval(a.as_ref());
    let out = out.as_primitive::<Int8Type>();
    assert_eq!(out.value(0), -56);
    assert_eq!(out.value(1), 127);
}

#[test]
fn float_sum_accumulates_in_f32() {
    let mut a = acc("SUM", Some("FLOAT"));
    let values: ArrayRef = Arc::new(Float32Array::from(vec![16_777_216.0f32, 1.0, 1.0]));
    update(a.as_mut(), vec![values.clone()], &[0, 0, 0]);
    let out = eval(a.as_ref());
    assert_eq!(out.as_primitive::<Float32Type>().value(0), 16_777_216.0);
    // AVG over FLOAT sums in DOUBLE: (16777216 + 1 + 1) / 3 as f32.
    let mut avg = acc("AVG", Some("FLOAT"));
    update(avg.as_mut(), vec![values], &[0, 0, 0]);
    let out = eval(avg.as_ref());
    assert_eq!(
        out.as_primitive::<Float32Type>().value(0),
        (16_777_218.0f64 / 3.0) as f32
    );
}

#[test]
fn float_sum_of_negative_zero_is_negative_zero() {
    let mut a = acc("SUM", Some("DOUBLE"));
    update(a.as_mut(), vec![f64s(&[Some(-0.0)])], &[0]);
    assert!(eval(a.as_ref())
        .as_primitive::<Float64Type>()
        .value(0)
        .is_sign_negative());
    // SUM0 starts from Flink's literal 0.0: 0.0 + -0.0 = 0.0.
    let mut a = acc("SUM0", Some("DOUBLE"));
    update(a.as_mut(), vec![f64s(&[Some(-0.0)])], &[0]);
    assert!(eval(a.as_ref())
        .as_primitive::<Float64Type>()
        .value(0)
        .is_sign_positive());
}

#[test]
fn decimal_sum_overflows_to_null_and_a_later_value_restarts_it() {
    let mut a = acc("SUM", Some("DECIMAL(38, 0)"));
    assert_eq!(a.result_type(), DataType::Decimal128(38, 0));
    update(
        a.as_mut(),
        vec![decimals(&[Some(MAX_38), Some(1)], 38, 0)],
        &[0, 0],
    );
    assert!(
        eval(a.as_ref()).is_null(0),
        "overflow past 38 digits is NULL"
    );
    update(a.as_mut(), vec![decimals(&[Some(5)], 38, 0)], &[0]);
    let out = eval(a.as_ref());
    assert_eq!(
        out.as_primitive::<Decimal128Type>().value(0),
        5,
        "IF(isNull(sum), value, ...)"
    );

    // SUM0 and AVG stay NULL: plus(NULL, x) is NULL.
    for function in ["SUM0", "AVG"] {
        let mut a = acc(function, Some("DECIMAL(38, 0)"));
        update(
            a.as_mut(),
            vec![decimals(&[Some(MAX_38), Some(1), Some(5)], 38, 0)],
            &[0, 0, 0],
        );
        assert!(eval(a.as_ref()).is_null(0), "{function} stays NULL");
    }
}

#[test]
fn decimal_18_sum_widens_to_decimal_38() {
    let mut a = acc("SUM", Some("DECIMAL(18, 2)"));
    assert_eq!(a.result_type(), DataType::Decimal128(38, 2));
    let big = 999_999_999_999_999_999i128;
    update(
        a.as_mut(),
        vec![decimals(&[Some(big), Some(big)], 18, 2)],
        &[0, 0],
    );
    assert_eq!(
        eval(a.as_ref()).as_primitive::<Decimal128Type>().value(0),
        2 * big
    );
}

#[test]
fn decimal_avg_rounds_half_up_to_max_6_s() {
    let mut a = acc("AVG", Some("DECIMAL(10, 2)"));
    assert_eq!(a.result_type(), DataType::Decimal128(38, 6));
    assert_eq!(
        a.partial_types(),
        vec![DataType::Decimal128(38, 2), DataType::Int64]
    );
    // 1.00, 2.00, 2.00 -> 5.00 / 3 = 1.666666.. -> 1.666667
    // -1.00, -2.00 -> -1.5 -> -1.500000; 0.01, 0.00, 0.00 -> 0.003333
    update(
        a.as_mut(),
        vec![decimals(
            &[
                Some(100),
                Some(200),
                Some(200),
                Some(-100),
                Some(-200),
                Some(1),
                Some(0),
                Some(0),
            ],
            10,
            2,
        )],
        &[0, 0, 0, 1, 1, 2, 2, 2],
    );
    let out = eval(a.as_ref());
    let out = out.as_primitive::<Decimal128Type>();
    assert_eq!(out.value(0), 1_666_667);
    assert_eq!(out.value(1), -1_500_000);
    assert_eq!(out.value(2), 3_333);
    // A scale above 6 is kept: DECIMAL(20, 8).
    let mut a = acc("AVG", Some("DECIMAL(20, 8)"));
    assert_eq!(a.result_type(), DataType::Decimal128(38, 8));
    update(
        a.as_mut(),
        vec![decimals(&[Some(1), Some(0)], 20, 8)],
        &[0, 0],
    );
    assert_eq!(
        eval(a.as_ref()).as_primitive::<Decimal128Type>().value(0),
        1,
        "0.000000005 -> 0.00000001"
    );
}

#[test]
fn integer_avg_truncates_toward_zero() {
    let mut a = acc("AVG", Some("INT"));
    let values: ArrayRef = Arc::new(Int32Array::from(vec![-1, -2, 1, 2, i32::MAX, i32::MAX]));
    update(a.as_mut(), vec![values], &[0, 0, 1, 1, 2, 2]);
    let out = eval(a.as_ref());
    let out = out.as_primitive::<Int32Type>();
    assert_eq!(out.value(0), -1, "-3 / 2 truncates toward zero");
    assert_eq!(out.value(1), 1);
    assert_eq!(out.value(2), i32::MAX, "the sum is BIGINT, no INT overflow");
}

#[test]
fn all_null_groups() {
    let nulls = || vec![f64s(&[None, None])];
    let expectations: [(&str, bool); 5] = [
        ("MIN", true),
        ("SUM", true),
        ("AVG", true),
        ("SUM0", false),
        ("COUNT", false),
    ];
    for (function, is_null) in expectations {
        let mut a = acc(function, Some("DOUBLE"));
        update(a.as_mut(), nulls(), &[0, 0]);
        let out = eval(a.as_ref());
        assert_eq!(out.is_null(0), is_null, "{function} of only NULLs");
        if function == "SUM0" {
            assert_eq!(out.as_primitive::<Float64Type>().value(0), 0.0);
        }
        if function == "COUNT" {
            assert_eq!(out.as_primitive::<Int64Type>().value(0), 0);
        }
    }
    let mut star = acc("COUNT", None);
    update(star.as_mut(), vec![], &[0, 0, 1]);
    let out = eval(star.as_ref());
    assert_eq!(out.as_primitive::<Int64Type>().values().as_ref(), &[2, 1]);
}

#[test]
fn filter_column_drops_false_and_null_rows() {
    let filter = BooleanArray::from(vec![Some(true), Some(false), None, Some(true)]);
    let values: ArrayRef = Arc::new(Int32Array::from(vec![Some(5), Some(1), Some(0), None]));
    let mut min = acc("MIN", Some("INT"));
    update_with(
        min.as_mut(),
        vec![values.clone()],
        &[0, 0, 0, 0],
        Some(&filter),
        None,
    )
    .unwrap();
    assert_eq!(eval(min.as_ref()).as_primitive::<Int32Type>().value(0), 5);
    let mut count = acc("COUNT", Some("INT"));
    update_with(
        count.as_mut(),
        vec![values],
        &[0, 0, 0, 0],
        Some(&filter),
        None,
    )
    .unwrap();
    assert_eq!(eval(count.as_ref()).as_primitive::<Int64Type>().value(0), 1);
    let mut star = acc("COUNT_STAR", None);
    update_with(star.as_mut(), vec![], &[0, 0, 0, 0], Some(&filter), None).unwrap();
    assert_eq!(eval(star.as_ref()).as_primitive::<Int64Type>().value(0), 2);
}

#[test]
fn insert_only_accumulators_reject_retractions() {
    let values: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    for kinds in [[0i8, 1], [0, 3]] {
        let mut a = acc("SUM", Some("INT"));
        let err = update_with(
            a.as_mut(),
            vec![values.clone()],
            &[0, 0],
            None,
            Some(&kinds),
        );
        assert!(
            matches!(err, Err(AggError::Input(ref m)) if m.contains("insert-only")),
            "{err:?}"
        );
    }
    // +I and +U are accumulated.
    let mut a = acc("SUM", Some("INT"));
    update_with(a.as_mut(), vec![values], &[0, 0], None, Some(&[0, 2])).unwrap();
    assert_eq!(eval(a.as_ref()).as_primitive::<Int32Type>().value(0), 3);
}

#[test]
fn wrong_column_type_is_an_input_error() {
    let mut a = acc("MIN", Some("INT"));
    let values: ArrayRef = Arc::new(Int64Array::from(vec![1i64]));
    let err = update_with(a.as_mut(), vec![values], &[0], None, None);
    assert!(
        matches!(err, Err(AggError::Input(ref m)) if m.contains("Int32")),
        "{err:?}"
    );
    // group ids beyond the state are an error too, not a panic
    let values: ArrayRef = Arc::new(Int32Array::from(vec![1]));
    let err = a.update(&BatchUpdate {
        args: &[values],
        group_ids: &[7],
        filter: None,
        row_kinds: None,
        distinct: None,
    });
    assert!(matches!(err, Err(AggError::Input(_))));
}

#[test]
fn traced_updates_flag_changes_under_java_equality() {
    let mut a = acc("MAX", Some("DOUBLE"));
    a.resize(1);
    let values = f64s(&[Some(f64::NAN), Some(f64::NAN), None, Some(0.0)]);
    let mut changed = vec![false; 4];
    let out = a
        .update_traced(
            &BatchUpdate {
                args: &[values],
                group_ids: &[0, 0, 0, 0],
                filter: None,
                row_kinds: None,
                distinct: None,
            },
            &mut changed,
        )
        .unwrap();
    assert!(out
        .as_primitive::<Float64Type>()
        .values()
        .iter()
        .all(|v| v.is_nan()));
    // NULL -> NaN changed; NaN -> NaN is "changed" under Java == (NaN != NaN).
    assert_eq!(changed, vec![true, true, true, true]);

    let mut a = acc("MAX", Some("DOUBLE"));
    a.resize(1);
    let values = f64s(&[Some(0.0), Some(-0.0), Some(1.0), Some(0.5)]);
    let mut changed = vec![false; 4];
    a.update_traced(
        &BatchUpdate {
            args: &[values],
            group_ids: &[0, 0, 0, 0],
            filter: None,
            row_kinds: None,
            distinct: None,
        },
        &mut changed,
    )
    .unwrap();
    assert_eq!(changed, vec![true, false, true, false]);

    // mark_changed: -0.0 == 0.0, NULL == NULL, NaN != NaN
    let before = f64s(&[Some(0.0), None, Some(f64::NAN), Some(1.0)]);
    let after = f64s(&[Some(-0.0), None, Some(f64::NAN), Some(2.0)]);
    let mut changed = vec![false; 4];
    a.mark_changed(&before, &after, &mut changed).unwrap();
    assert_eq!(changed, vec![false, false, true, true]);
}

#[test]
fn sum0_merge_of_a_null_partial_is_null() {
    let mut global = acc("SUM0", Some("DECIMAL(38, 0)"));
    global.resize(2);
    global
        .merge(&[decimals(&[Some(3), None], 38, 0)], &[0, 1])
        .unwrap();
    let out = eval(global.as_ref());
    assert_eq!(out.as_primitive::<Decimal128Type>().value(0), 3);
    assert!(out.is_null(1));
    // SUM skips a NULL partial.
    let mut global = acc("SUM", Some("DECIMAL(38, 0)"));
    global.resize(1);
    global
        .merge(&[decimals(&[Some(3), None], 38, 0)], &[0, 0])
        .unwrap();
    assert_eq!(
        eval(global.as_ref())
            .as_primitive::<Decimal128Type>()
            .value(0),
        3
    );
}

#[test]
fn local_partials_merge_into_global() {
    let mut local = acc("AVG", Some("BIGINT"));
    let values: ArrayRef = Arc::new(Int64Array::from(vec![1i64, 2, 4]));
    update(local.as_mut(), vec![values], &[0, 0, 1]);
    let partials = local.partials(&[0, 1]).unwrap();
    assert_eq!(
        partials[1].as_primitive::<Int64Type>().values().as_ref(),
        &[2, 1]
    );
    local.reset();
    assert_eq!(local.num_groups(), 0);
    let mut global = acc("AVG", Some("BIGINT"));
    global.resize(1);
    global.merge(&partials, &[0, 0]).unwrap();
    assert_eq!(
        eval(global.as_ref()).as_primitive::<Int64Type>().value(0),
        2,
        "7 / 3"
    );
}

/// Rough speed check (run: `cargo test --release -p aggforge-runtime --test
/// templates -- --ignored --nocapture`): MIN and MAX INT update at 4096 rows
/// and 64 groups, with and without 1/8 NULLs.
#[test]
#[ignore]
fn timing_min_max_int_update() {
    use std::time::Instant;
    let rows = 4096usize;
    let groups: Vec<u32> = (0..rows as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) % 64)
        .collect();
    let dense: ArrayRef = Arc::new(Int32Array::from_iter_values(
        (0..rows as i32).map(|i| i.wrapping_mul(7919)),
    ));
    let sparse: ArrayRef = Arc::new(Int32Array::from_iter(
        (0..rows as i32).map(|i| (i % 8 != 3).then_some(i.wrapping_mul(7919))),
    ));
    for (label, column) in [("no nulls", dense), ("1/8 nulls", sparse)] {
        for function in ["MIN", "MAX", "SUM", "COUNT"] {
            let mut a = acc(function, Some("INT"));
            a.resize(64);
            let args = vec![column.clone()];
            let batch = BatchUpdate {
                args: &args,
                group_ids: &groups,
                filter: None,
                row_kinds: None,
                distinct: None,
            };
            let iterations = 20_000;
            let mut best = f64::MAX;
            for _ in 0..5 {
                let start = Instant::now();
                for _ in 0..iterations / 5 {
                    a.update(&batch).unwrap();
                }
                let ns = start.elapsed().as_nanos() as f64 / (iterations / 5 * rows) as f64;
                best = best.min(ns);
            }
            println!(
                "{function}<INT> update, {label}: {best:.3} ns/row ({:.0} M rows/s)",
                1e3 / best
            );
        }
    }
}
