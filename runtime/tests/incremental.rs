//! Split-distinct plans in mini-batch mode: the partial level's local
//! phase, Flink's IncrementalGroupAggregate (the partial level's global
//! phase fused with the final level's local phase, `AggPlan::final_key`)
//! and the final level's global phase give the single phase's final table,
//! over insert-only and retracting input.

use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};

const BUCKETS: i64 = 4;

fn over_v(function: &str, distinct: bool) -> AggCall {
    AggCall {
        distinct,
        ..call(function, Some((2, SqlType::of("BIGINT"))))
    }
}

/// Rows (kind, k, bucket, v): the bucket is Flink's split key
/// (`MOD(HASH_CODE(v), n)`), so a value always lands in one bucket. With
/// `retract`, earlier rows are retracted too.
fn input(retract: bool) -> Vec<RecordBatch> {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut live: Vec<(i32, Option<i64>)> = Vec::new();
    (0..12)
        .map(|_| {
            let mut rows: Vec<(i8, i32, Option<i64>)> = Vec::new();
            for _ in 0..150 {
                let r = next();
                if retract && !live.is_empty() && r.is_multiple_of(4) {
                    let (k, v) = live.swap_remove((r as usize / 4) % live.len());
                    rows.push((3, k, v));
                    continue;
                }
                let k = (r % 7) as i32;
                let v = next() % 30;
                let v = (v != 29).then_some(v as i64);
                rows.push((0, k, v));
                live.push((k, v));
            }
            let kinds = rows.iter().map(|r| r.0).collect();
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int32Array::from(
                    rows.iter().map(|r| r.1).collect::<Vec<_>>(),
                )),
                Arc::new(Int32Array::from(
                    rows.iter()
                        .map(|r| r.2.map_or(0, |v| (v % BUCKETS) as i32))
                        .collect::<Vec<_>>(),
                )),
                Arc::new(Int64Array::from(
                    rows.iter().map(|r| r.2).collect::<Vec<_>>(),
                )),
            ];
            if retract {
                batch_with_kinds(columns, kinds)
            } else {
                batch(columns)
            }
        })
        .collect()
}

/// The partial level keyed on (k, bucket).
fn partial_single(calls: Vec<AggCall>, input: InputMode) -> AggPlan {
    AggPlan {
        key_columns: vec![0, 1],
        key_types: vec![SqlType::of("INT"), SqlType::of("INT")],
        input,
        ..plan(SqlType::of("INT"), calls, Emission::Immediate)
    }
}

/// The final level's global phase: per partial call, a function over its
/// incremental partial columns (`width` of them, after the key).
fn final_global(
    functions: &[(&str, usize)],
    input: InputMode,
    count_star_column: Option<usize>,
) -> AggPlan {
    let mut next = 1;
    let calls = functions
        .iter()
        .map(|&(f, width)| {
            let call = AggCall {
                args: (next..next + width).collect(),
                ..call(f, Some((0, SqlType::of("BIGINT"))))
            };
            next += width;
            call
        })
        .collect();
    AggPlan {
        phase: Phase::Global,
        emission: Emission::MiniBatch,
        input,
        count_star_column,
        ..plan(SqlType::of("INT"), calls, Emission::MiniBatch)
    }
}

/// Runs the three operators (local bundles of one batch, incremental and
/// final bundles of two) and returns the final changelog and the
/// incremental operator.
fn split_distinct(
    partial: &AggPlan,
    final_plan: AggPlan,
    batches: &[RecordBatch],
) -> (Vec<String>, GroupAggOperator, Vec<RecordBatch>) {
    let (local_plan, mut incremental_plan) = two_phase_plans(partial);
    incremental_plan.final_key = Some(vec![0]);
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let mut incremental = GroupAggOperator::new(incremental_plan).unwrap();
    let mut global = GroupAggOperator::new(final_plan).unwrap();
    let mut changelog = Vec::new();
    let mut deltas = Vec::new();
    for bundle in batches.chunks(2) {
        for b in bundle {
            assert!(local.process(b).unwrap().is_none());
            let partials = local.flush().unwrap().unwrap();
            assert!(incremental.process(&partials).unwrap().is_none());
        }
        let delta = incremental.flush().unwrap().unwrap();
        global.process(&delta).unwrap();
        deltas.push(delta);
        changelog.extend(opt_rows(global.flush().unwrap()));
    }
    (changelog, incremental, deltas)
}

#[test]
fn insert_only_split_distinct_equals_the_single_phase() {
    let calls = vec![
        over_v("COUNT", true),
        call("COUNT_STAR", None),
        over_v("SUM", false),
        over_v("MAX", true),
        over_v("SUM", true),
    ];
    let batches = input(false);
    let mut single = GroupAggOperator::new(plan(
        SqlType::of("INT"),
        calls
            .iter()
            .map(|c| AggCall {
                args: c.args.iter().map(|_| 2).collect(),
                ..c.clone()
            })
            .collect(),
        Emission::Immediate,
    ))
    .unwrap();
    let expected = final_table(&run_immediate(&mut single, &batches));
    let partial = partial_single(calls, InputMode::InsertOnly);
    let final_plan = final_global(
        &[("SUM0", 1), ("SUM0", 1), ("SUM", 1), ("MAX", 1), ("SUM", 1)],
        InputMode::InsertOnly,
        None,
    );
    let (changelog, incremental, deltas) = split_distinct(&partial, final_plan, &batches);
    assert_eq!(expected.len(), 7);
    assert_eq!(final_table(&changelog), expected);
    // Output: the final key and one partial per call (no view), +I.
    let schema = incremental.output_schema();
    assert_eq!(schema.fields().len(), 1 + 5 + 1);
    // Values repeat: later bundles bring few new distinct values, so the
    // DISTINCT deltas shrink while COUNT(*) deltas do not.
    let last = rows(deltas.last().unwrap());
    assert_eq!(last.len(), 7, "one row per final key: {last:?}");
    let sum_new: i64 = deltas
        .last()
        .unwrap()
        .column(1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .iter()
        .map(|v| v.unwrap())
        .sum();
    assert!(sum_new < 20, "most values were seen before: {last:?}");
}

#[test]
fn retracting_split_distinct_equals_the_single_phase() {
    // Over retracting input the partial level counts records with an
    // inserted COUNT(*), which the incremental emits last.
    let calls = vec![over_v("COUNT", true), over_v("SUM", true)];
    let batches = input(true);
    let mut single_plan = plan(
        SqlType::of("INT"),
        calls
            .iter()
            .map(|c| AggCall {
                args: c.args.iter().map(|_| 2).collect(),
                ..c.clone()
            })
            .collect(),
        Emission::Immediate,
    );
    single_plan.input = InputMode::Retracting;
    let mut single = GroupAggOperator::new(single_plan).unwrap();
    let expected = final_table(&run_immediate(&mut single, &batches));
    let partial = partial_single(calls, InputMode::Retracting);
    let final_plan = final_global(&[("SUM0", 1), ("SUM", 2)], InputMode::Retracting, Some(4));
    let (changelog, incremental, _) = split_distinct(&partial, final_plan, &batches);
    assert!(!expected.is_empty());
    assert_eq!(final_table(&changelog), expected);
    // key, COUNT's count, SUM's sum and count, the record counter, kind.
    assert_eq!(incremental.output_schema().fields().len(), 6);
}

#[test]
fn order_sensitive_distinct_calls_are_refused() {
    let calls = vec![AggCall {
        distinct: true,
        ..call("SUM", Some((2, SqlType::of("DOUBLE"))))
    }];
    let (_, mut incremental) = two_phase_plans(&partial_single(calls, InputMode::InsertOnly));
    assert!(aggforge_runtime::plan::admit(&incremental).is_ok());
    incremental.final_key = Some(vec![0]);
    let refused = aggforge_runtime::plan::admit(&incremental).unwrap_err();
    assert!(
        refused.reason.contains("HashMap order"),
        "{}",
        refused.reason
    );
    incremental.final_key = Some(vec![0, 0]);
    assert!(GroupAggOperator::new(incremental).is_err());
}

/// Nexmark q16's incremental aggregate under its split plan: about every
/// bid of a cold channel opens its own partial key (channel, bucket,
/// Expand branch), holding one value in one of the two views. The four
/// DISTINCT calls over one argument share one view in state, as Flink's
/// DistinctInfo shares one MapView: one table per group and view, not one
/// per call (791 bytes per partial key with a view per call, 423 shared).
#[test]
fn incremental_state_per_partial_key_is_small() {
    // Input columns: 0 channel, 1 bucket, 2 branch, 3 bidder, 4 auction,
    // 5..8 the three rank filters, 8 minute.
    let int = SqlType::of("INT");
    let distinct = |arg: usize, filter: Option<usize>| AggCall {
        distinct: true,
        filter,
        ..call("COUNT", Some((arg, SqlType::of("BIGINT"))))
    };
    let mut calls = vec![
        call("MAX", Some((8, SqlType::of("VARCHAR")))),
        call("COUNT_STAR", None),
    ];
    for f in 5..8 {
        calls.push(AggCall {
            filter: Some(f),
            ..call("COUNT_STAR", None)
        });
    }
    for arg in [3, 4] {
        calls.push(distinct(arg, None));
        for f in 5..8 {
            calls.push(distinct(arg, Some(f)));
        }
    }
    let partial = AggPlan {
        key_columns: vec![0, 1, 2],
        key_types: vec![int, int, int],
        memory_budget_bytes: 1 << 30,
        ..plan(int, calls, Emission::Immediate)
    };
    let (local_plan, mut incremental_plan) = two_phase_plans(&partial);
    incremental_plan.final_key = Some(vec![0]);
    let mut local = GroupAggOperator::new(local_plan).unwrap();
    let mut incremental = GroupAggOperator::new(incremental_plan).unwrap();
    let keys = 200_000usize;
    let mut next = xorshift(7);
    for chunk in 0..(keys / 10_000) {
        let rows = 10_000;
        let mut columns: Vec<Vec<i32>> = (0..3).map(|_| Vec::with_capacity(rows)).collect();
        let (mut bidder, mut auction) = (Vec::new(), Vec::new());
        let mut filters: Vec<Vec<bool>> = vec![Vec::new(); 3];
        for r in 0..rows {
            let id = (chunk * rows + r) as i32;
            let branch = id % 2;
            columns[0].push(id / 2);
            columns[1].push((next() % 1024) as i32);
            columns[2].push(branch);
            let value = (next() % 50_000) as i64;
            bidder.push((branch == 0).then_some(value));
            auction.push((branch == 1).then_some(value));
            let rank = (next() % 3) as usize;
            for (f, column) in filters.iter_mut().enumerate() {
                column.push(f == rank);
            }
        }
        let mut batch_columns: Vec<ArrayRef> = columns
            .into_iter()
            .map(|c| Arc::new(Int32Array::from(c)) as ArrayRef)
            .collect();
        batch_columns.push(Arc::new(Int64Array::from(bidder)));
        batch_columns.push(Arc::new(Int64Array::from(auction)));
        for column in filters {
            batch_columns.push(Arc::new(arrow_array::BooleanArray::from(column)));
        }
        batch_columns.push(Arc::new(arrow_array::StringArray::from(
            (0..rows)
                .map(|r| format!("{:02}:{:02}", r % 24, r % 60))
                .collect::<Vec<_>>(),
        )));
        assert!(local.process(&batch(batch_columns)).unwrap().is_none());
        let partials = local.flush().unwrap().unwrap();
        assert!(incremental.process(&partials).unwrap().is_none());
        incremental.flush().unwrap().unwrap();
    }
    let per_key = incremental.memory_used() / keys;
    eprintln!("incremental state: {per_key} bytes per partial key");
    assert!(per_key < 500, "{per_key} bytes per partial key");
}
