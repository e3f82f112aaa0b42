//! Two-phase DISTINCT: local partials carry Flink's distinct MapView (one
//! view column per argument, shared by its DISTINCT calls), the global
//! phase merges them; the final table equals the single phase's on the
//! same rows, over insert-only and retracting input.

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::RecordBatch;
use arrow_schema::DataType;

fn distinct(function: &str) -> AggCall {
    AggCall {
        distinct: true,
        ..call(function, Some((1, SqlType::of("BIGINT"))))
    }
}

/// Batches of rows over few values per key (so values repeat within and
/// across bundles), NULL every ninth; with `retract`, a valid changelog
/// that also retracts earlier rows (-U/+U pairs and -D).
fn input(retract: bool) -> Vec<RecordBatch> {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let mut live: Vec<(i32, Option<i64>)> = Vec::new();
    (0..16)
        .map(|_| {
            let mut rows = Vec::new();
            for _ in 0..200 {
                let r = next();
                if retract && !live.is_empty() && r.is_multiple_of(3) {
                    let (k, v) = live.swap_remove((r as usize / 3) % live.len());
                    if r.is_multiple_of(2) {
                        rows.push((3, k, v));
                    } else {
                        let w = Some((next() % 12) as i64);
                        rows.push((1, k, v));
                        rows.push((2, k, w));
                        live.push((k, w));
                    }
                    continue;
                }
                let k = (r % 23) as i32;
                let v = next() % 14;
                let v = (v != 13).then_some(v as i64 - 4);
                rows.push((0, k, v));
                live.push((k, v));
            }
            kind_rows(&rows, retract)
        })
        .collect()
}

/// Runs `single` on one operator and as local then global (local bundles
/// of one batch, global bundles of three), and compares the final tables.
fn two_phase_equals_single_phase(single: AggPlan, batches: &[RecordBatch]) -> GroupAggOperator {
    let (local_plan, global_plan) = two_phase_plans(&single);
    let mut op = GroupAggOperator::new(single).unwrap();
    let expected = final_table(&run_immediate(&mut op, batches));
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let mut global = GroupAggOperator::new(global_plan).unwrap();
    let mut changelog = Vec::new();
    for bundle in batches.chunks(3) {
        for b in bundle {
            assert!(local.process(b).unwrap().is_none());
            let partials = local.flush().unwrap().unwrap();
            global.process(&partials).unwrap();
        }
        changelog.extend(opt_rows(global.flush().unwrap()));
    }
    assert!(!expected.is_empty());
    assert_eq!(final_table(&changelog), expected);
    local
}

#[test]
fn insert_only_distinct_calls_share_one_view_across_the_exchange() {
    let single = plan(
        SqlType::of("INT"),
        vec![
            distinct("COUNT"),
            distinct("SUM"),
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            distinct("MIN"),
            distinct("AVG"),
            call("COUNT_STAR", None),
        ],
        Emission::Immediate,
    );
    let local = two_phase_equals_single_phase(single, &input(false));
    assert_eq!(
        local.specializations()[0],
        "COUNT DISTINCT<BIGINT>/insert_only"
    );
    // keys, COUNT, SUM, SUM, MIN, AVG (2), COUNT(*), one view, kind.
    let schema = local.output_schema();
    assert_eq!(schema.fields().len(), 10);
    let DataType::List(entry) = schema.field(8).data_type() else {
        panic!("the view is a list: {:?}", schema.field(8));
    };
    let DataType::Struct(fields) = entry.data_type() else {
        panic!("view entries are structs: {entry:?}");
    };
    // Four calls share the view: one Int64 of bits per value.
    assert_eq!(fields[0].data_type(), &DataType::Int64);
    assert_eq!(fields[1].data_type(), &DataType::Int64);
}

#[test]
fn retracting_distinct_views_carry_signed_counts() {
    // One call per view (an Int64 count) and two calls sharing one (a list
    // of counts), over a changelog that retracts values of earlier bundles.
    for calls in [
        vec![distinct("COUNT"), call("COUNT_STAR", None)],
        vec![
            distinct("COUNT"),
            distinct("SUM"),
            call("SUM", Some((1, SqlType::of("BIGINT")))),
        ],
    ] {
        let mut single = plan(SqlType::of("INT"), calls, Emission::Immediate);
        single.input = InputMode::Retracting;
        two_phase_equals_single_phase(single, &input(true));
    }
}

#[test]
fn a_two_phase_plan_lists_every_distinct_call_in_a_view() {
    let single = plan(
        SqlType::of("INT"),
        vec![distinct("COUNT")],
        Emission::Immediate,
    );
    let (mut local, mut global) = two_phase_plans(&single);
    local.views.clear();
    let err = GroupAggOperator::new(local).unwrap_err().to_string();
    assert!(err.contains("is in no DISTINCT view"), "{err}");
    global.views[0].column = None;
    let err = GroupAggOperator::new(global).unwrap_err().to_string();
    assert!(err.contains("names the view's input column"), "{err}");
}

#[test]
fn order_sensitive_distinct_sums_over_retracting_input_stay_single_phase() {
    // Flink's global folds FLOAT/DOUBLE sums in Java HashMap order, which
    // the runtime models over insert-only input only.
    let mut single = plan(
        SqlType::of("INT"),
        vec![AggCall {
            distinct: true,
            ..call("SUM", Some((1, SqlType::of("DOUBLE"))))
        }],
        Emission::Immediate,
    );
    single.input = InputMode::Retracting;
    assert!(GroupAggOperator::new(single.clone()).is_ok());
    single.emission = Emission::MiniBatch;
    let (local, _) = two_phase_plans(&single);
    let err = GroupAggOperator::new(local).unwrap_err().to_string();
    assert!(err.contains("phase local not listed"), "{err}");
}

/// Runs `single` as one local bundle (`batches`) and one global bundle of
/// its partials; returns the local's partial batch and the global's
/// changelog.
fn one_two_phase_bundle(single: &AggPlan, batches: &[RecordBatch]) -> (RecordBatch, Vec<String>) {
    let (local_plan, global_plan) = two_phase_plans(single);
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let mut global = GroupAggOperator::new(global_plan).unwrap();
    for b in batches {
        assert!(local.process(b).unwrap().is_none());
    }
    let partials = local.flush().unwrap().unwrap();
    assert!(global.process(&partials).unwrap().is_none());
    (partials, opt_rows(global.flush().unwrap()))
}

#[test]
fn floating_distinct_sums_fold_in_java_hash_map_order() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Float64Type;
    use arrow_array::{Array, Float64Array, Int32Array};
    use std::sync::Arc;
    // Entry order and the iteration order of a java.util.HashMap<Double, _>
    // filled in entry order (and of its copy) differ; jshell on JDK 17:
    // [1.0, 0.7, -0.0, 0.0, 0.001, 0.1, 1.0E16, -1.0E16, 2.5E15, 3.3], whose
    // sum is 2.5000000000000055E15 (in entry order 2.500000000000004E15).
    let values = [
        1e16, 1.0, -1e16, 0.1, 0.7, 3.3, -0.0, 0.0, 1e-3, 2.5e15, 1.0, 0.7,
    ];
    let mut column: Vec<Option<f64>> = values.iter().copied().map(Some).collect();
    column.insert(4, None);
    let rows = column.len();
    let batch = batch(vec![
        Arc::new(Int32Array::from(vec![7; rows])),
        Arc::new(Float64Array::from(column)),
    ]);
    let double = || Some((1, SqlType::of("DOUBLE")));
    let sum = AggCall {
        distinct: true,
        ..call("SUM", double())
    };
    let min = AggCall {
        distinct: true,
        ..call("MIN", double())
    };
    let single = plan(SqlType::of("INT"), vec![sum, min], Emission::MiniBatch);
    let mut op = GroupAggOperator::new(single.clone()).unwrap();
    assert!(op.process(&batch).unwrap().is_none());
    assert_eq!(
        opt_rows(op.flush().unwrap()),
        strs(&["+I[7, 2500000000000004.0, -1e16]"])
    );
    let (partials, changelog) = one_two_phase_bundle(&single, std::slice::from_ref(&batch));
    assert_eq!(changelog, strs(&["+I[7, 2500000000000005.5, -1e16]"]));
    // The local's view lists the values in the iteration order of its Java
    // map, NULL included (jshell, the same values put in the same order:
    // [1.0, null, 0.7, -0.0, 0.0, 0.001, 0.1, 1.0E16, -1.0E16, 2.5E15, 3.3]).
    let view = partials.column(partials.num_columns() - 2).as_list::<i32>();
    let entries = view.value(0);
    let keys = entries.as_struct().column(0).as_primitive::<Float64Type>();
    let listed: Vec<Option<f64>> = (0..keys.len())
        .map(|i| keys.is_valid(i).then(|| keys.value(i)))
        .collect();
    assert_eq!(
        listed,
        vec![
            Some(1.0),
            None,
            Some(0.7),
            Some(-0.0),
            Some(0.0),
            Some(1e-3),
            Some(0.1),
            Some(1e16),
            Some(-1e16),
            Some(2.5e15),
            Some(3.3)
        ]
    );
}

#[test]
fn floating_distinct_extremes_keep_the_first_in_java_order() {
    use arrow_array::{Float64Array, Int32Array};
    use std::sync::Arc;
    // Java's `<` is false both ways between NaN and 1.0, so MIN keeps the
    // first it folds; HashMap<Double, _> iterates 1.0 before NaN whatever
    // the entry order (jshell: [1.0, NaN]).
    let batch = batch(vec![
        Arc::new(Int32Array::from(vec![1, 1])),
        Arc::new(Float64Array::from(vec![f64::NAN, 1.0])),
    ]);
    let min = AggCall {
        distinct: true,
        ..call("MIN", Some((1, SqlType::of("DOUBLE"))))
    };
    let single = plan(SqlType::of("INT"), vec![min], Emission::MiniBatch);
    let mut op = GroupAggOperator::new(single.clone()).unwrap();
    assert!(op.process(&batch).unwrap().is_none());
    assert_eq!(opt_rows(op.flush().unwrap()), strs(&["+I[1, NaN]"]));
    let (_, changelog) = one_two_phase_bundle(&single, &[batch]);
    assert_eq!(changelog, strs(&["+I[1, 1.0]"]));
}
