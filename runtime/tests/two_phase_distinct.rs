//! Two-phase DISTINCT: local partials carry Flink's distinct MapView (one
//! view column per argument, shared by its DISTINCT calls), the global
//! phase merges them; the final table equals the single phase's on the
//! same rows, over insert-only and retracting input.

mod common;

use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use common::*;

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
fn order_sensitive_distinct_sums_stay_single_phase() {
    // Flink's global folds FLOAT/DOUBLE sums in Java HashMap order.
    let mut single = plan(
        SqlType::of("INT"),
        vec![AggCall {
            distinct: true,
            ..call("SUM", Some((1, SqlType::of("DOUBLE"))))
        }],
        Emission::Immediate,
    );
    assert!(GroupAggOperator::new(single.clone()).is_ok());
    single.emission = Emission::MiniBatch;
    let (local, _) = two_phase_plans(&single);
    let err = GroupAggOperator::new(local).unwrap_err().to_string();
    assert!(err.contains("phase local not listed"), "{err}");
}
