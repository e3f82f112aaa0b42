//! Shared DISTINCT views: DISTINCT calls over one argument column share one
//! view (Flink's DistinctInfo), each with its own FILTER as its column of
//! the view's cells, up to any number of calls. The oracle is the same
//! plan with each call reading its own copy of the column, so no two calls
//! share a view: the full changelogs must be equal, and the shared plan
//! must hold less memory.

use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggCall, AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch};

/// Calls in the plans: more than 64, so the insert-only cells take two
/// words of bits.
const CALLS: usize = 70;
/// FILTER columns the calls cycle through (call `c % 7 == 6` has none).
const FILTERS: usize = 6;

/// Column of call `c`'s argument: column 1 when shared, else its own copy.
fn arg_column(c: usize, shared: bool) -> usize {
    if shared {
        1
    } else {
        1 + c
    }
}

/// The first FILTER column (after the key and the argument copies).
const FIRST_FILTER: usize = 1 + CALLS;

fn calls(shared: bool) -> Vec<AggCall> {
    let functions = ["COUNT", "SUM", "MIN", "MAX", "AVG"];
    (0..CALLS)
        .map(|c| AggCall {
            distinct: true,
            filter: (c % 7 != 6).then_some(FIRST_FILTER + c % FILTERS),
            ..call(
                functions[c % functions.len()],
                Some((arg_column(c, shared), SqlType::of("BIGINT"))),
            )
        })
        .chain([call("COUNT_STAR", None)])
        .collect()
}

/// Batches of (kind, key, value) over few values per key, NULL values and
/// FILTER columns with NULLs; with `retract`, a valid changelog that also
/// retracts earlier rows.
fn input(retract: bool) -> Vec<RecordBatch> {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut live: Vec<(i32, Option<i64>)> = Vec::new();
    (0..12)
        .map(|_| {
            let mut rows: Vec<(i8, i32, Option<i64>)> = Vec::new();
            for _ in 0..150 {
                let r = next();
                if retract && !live.is_empty() && r.is_multiple_of(3) {
                    let (k, v) = live.swap_remove((r as usize / 3) % live.len());
                    rows.push((3, k, v));
                    continue;
                }
                let k = (r % 11) as i32;
                let v = next() % 10;
                let v = (v != 9).then_some(v as i64 - 3);
                rows.push((0, k, v));
                live.push((k, v));
            }
            let keys: ArrayRef = Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1)));
            let values: ArrayRef = Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.2)));
            let mut columns = vec![keys];
            columns.extend((0..CALLS).map(|_| values.clone()));
            for f in 0..FILTERS {
                let filter: BooleanArray = rows
                    .iter()
                    .map(|_| match next() % 5 {
                        0 => None,
                        r => Some(!(r + f as u64).is_multiple_of(3)),
                    })
                    .collect();
                columns.push(Arc::new(filter));
            }
            if retract {
                batch_with_kinds(columns, rows.iter().map(|r| r.0).collect())
            } else {
                batch(columns)
            }
        })
        .collect()
}

fn plans(retract: bool, emission: Emission) -> (AggPlan, AggPlan) {
    let make = |shared| {
        let mut p = plan(SqlType::of("INT"), calls(shared), emission);
        if retract {
            p.input = InputMode::Retracting;
        }
        p
    };
    (make(true), make(false))
}

/// Runs both plans over the same batches (immediate, or bundles of three
/// batches) and checks the changelogs are equal and non-trivial and the
/// shared plan holds less memory.
fn shared_equals_separate(retract: bool, emission: Emission) {
    let (shared_plan, separate_plan) = plans(retract, emission);
    let mut shared = GroupAggOperator::new(shared_plan).unwrap();
    let mut separate = GroupAggOperator::new(separate_plan).unwrap();
    let batches = input(retract);
    let (a, b) = match emission {
        Emission::Immediate => (
            run_immediate(&mut shared, &batches),
            run_immediate(&mut separate, &batches),
        ),
        Emission::MiniBatch => {
            let bundles: Vec<Vec<RecordBatch>> = batches.chunks(3).map(|c| c.to_vec()).collect();
            (
                run_bundles(&mut shared, &bundles),
                run_bundles(&mut separate, &bundles),
            )
        }
    };
    assert!(a.len() > 40, "{} rows", a.len());
    if retract {
        assert!(a.iter().any(|r| r.starts_with("-U")));
    }
    assert_eq!(a, b);
    // Bits take one table for all calls; counts keep a word per call and
    // value, as Flink's Long[] does, so they save less.
    let (one, many) = (shared.memory_used(), separate.memory_used());
    let factor = if retract { 1 } else { 4 };
    assert!(
        one * factor < many,
        "a shared view holds {one} bytes, separate views {many}"
    );
}

#[test]
fn seventy_filtered_distinct_calls_share_one_view_over_insert_only_input() {
    shared_equals_separate(false, Emission::Immediate);
    shared_equals_separate(false, Emission::MiniBatch);
}

#[test]
fn seventy_filtered_distinct_calls_share_one_view_over_retracting_input() {
    shared_equals_separate(true, Emission::Immediate);
    shared_equals_separate(true, Emission::MiniBatch);
}

#[test]
fn a_shared_view_survives_a_snapshot_and_restore() {
    let (shared_plan, _) = plans(true, Emission::MiniBatch);
    let batches = input(true);
    let (first, rest) = batches.split_at(6);
    let mut expected_op = GroupAggOperator::new(shared_plan.clone()).unwrap();
    let bundles =
        |b: &[RecordBatch]| -> Vec<Vec<RecordBatch>> { b.chunks(3).map(|c| c.to_vec()).collect() };
    run_bundles(&mut expected_op, &bundles(first));
    let snapshot = expected_op.snapshot().unwrap();
    let expected = run_bundles(&mut expected_op, &bundles(rest));
    let mut restored = GroupAggOperator::new(shared_plan).unwrap();
    restored.restore(&snapshot).unwrap();
    assert_eq!(run_bundles(&mut restored, &bundles(rest)), expected);
    assert!(!expected.is_empty());
}
