//! `GroupAggOperator::stats`: the live group count (kept as groups gain and
//! lose state) against a model of Flink's record counting and against the
//! groups a snapshot holds, and the bytes and budget reported.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::{GroupAggOperator, OperatorStats};
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::snapshot::decode_key_group;
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};

const I: i8 = 0;
const UB: i8 = 1;
const UA: i8 = 2;
const D: i8 = 3;

fn sum_avg(emission: Emission, input: InputMode) -> AggPlan {
    let mut p = plan(
        SqlType::of("INT"),
        vec![
            call("SUM", Some((1, SqlType::of("BIGINT")))),
            call("AVG", Some((1, SqlType::of("BIGINT")))),
        ],
        emission,
    );
    p.input = input;
    p
}

/// (kind, key, value) rows; insert-only batches carry no kind column.
fn rows_of(rows: &[(i8, i32, i64)], with_kinds: bool) -> RecordBatch {
    let keys: ArrayRef = Arc::new(Int32Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let values: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.2).collect::<Vec<_>>(),
    ));
    if with_kinds {
        batch_with_kinds(vec![keys, values], rows.iter().map(|r| r.0).collect())
    } else {
        batch(vec![keys, values])
    }
}

/// Pseudo-random retracting rows over keys 0..40: half of them retract.
fn workload(batches: usize, rows: usize) -> Vec<Vec<(i8, i32, i64)>> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u32
    };
    (0..batches)
        .map(|_| {
            (0..rows)
                .map(|_| {
                    let kind = [I, UA, UB, D][next() as usize % 4];
                    (kind, (next() % 40) as i32, i64::from(next() % 100))
                })
                .collect()
        })
        .collect()
}

/// Groups with state as a snapshot sees them (every payload's rows).
fn snapshot_groups(op: &GroupAggOperator) -> usize {
    op.snapshot()
        .unwrap()
        .iter()
        .map(|(_, bytes)| decode_key_group(bytes).unwrap().batch.num_rows())
        .sum()
}

#[test]
fn immediate_group_count_follows_record_counts() {
    let mut op =
        GroupAggOperator::new(sum_avg(Emission::Immediate, InputMode::Retracting)).unwrap();
    assert_eq!(op.stats().groups, 0);
    // Flink's GroupAggFunction: a key holds state while its record count
    // is positive; a retraction without state is dropped.
    let mut counts: HashMap<i32, i64> = HashMap::new();
    let mut emptied = 0;
    for rows in workload(30, 64) {
        op.process(&rows_of(&rows, true)).unwrap();
        for &(kind, key, _) in &rows {
            let count = counts.entry(key).or_default();
            if kind == I || kind == UA {
                *count += 1;
            } else if *count > 0 {
                *count -= 1;
                emptied += usize::from(*count == 0);
            }
        }
        let model = counts.values().filter(|&&c| c > 0).count();
        assert_eq!(op.stats().groups, model);
        assert_eq!(op.num_groups(), snapshot_groups(&op));
    }
    assert!(emptied > 10, "the workload must empty groups: {emptied}");
}

#[test]
fn mini_batch_group_count_matches_the_snapshot() {
    let mut op =
        GroupAggOperator::new(sum_avg(Emission::MiniBatch, InputMode::Retracting)).unwrap();
    let mut seen = BTreeSet::new();
    for (i, rows) in workload(30, 64).iter().enumerate() {
        op.process(&rows_of(rows, true)).unwrap();
        if i % 3 == 2 {
            op.flush().unwrap();
            let groups = op.stats().groups;
            assert_eq!(groups, snapshot_groups(&op), "after bundle {i}");
            seen.insert(groups);
        }
    }
    assert!(seen.len() > 2, "the count must move: {seen:?}");
}

#[test]
fn local_phase_counts_the_open_bundle() {
    let (local, global) = two_phase_plans(&sum_avg(Emission::MiniBatch, InputMode::InsertOnly));
    let mut local = GroupAggOperator::new(local).unwrap();
    let mut global = GroupAggOperator::new(global).unwrap();
    local
        .process(&rows_of(&[(I, 1, 1), (I, 2, 1), (I, 1, 3)], false))
        .unwrap();
    assert_eq!(local.stats().groups, 2, "keys of the open bundle");
    let partials = local.flush().unwrap().unwrap();
    assert_eq!(local.stats().groups, 0, "the local phase keeps no state");
    global.process(&partials).unwrap();
    global.flush().unwrap();
    local.process(&rows_of(&[(I, 3, 1)], false)).unwrap();
    global.process(&local.flush().unwrap().unwrap()).unwrap();
    global.flush().unwrap();
    assert_eq!(global.stats().groups, 3);
}

#[test]
fn bytes_and_budget_are_reported() {
    let mut p = sum_avg(Emission::Immediate, InputMode::InsertOnly);
    p.memory_budget_bytes = 3 << 20;
    let mut op = GroupAggOperator::new(p).unwrap();
    let empty = op.stats();
    assert_eq!(empty.memory_budget, 3 << 20);
    let rows: Vec<(i8, i32, i64)> = (0..5_000).map(|k| (I, k, 1)).collect();
    op.process(&rows_of(&rows, false)).unwrap();
    let OperatorStats {
        memory_used,
        memory_budget,
        groups,
    } = op.stats();
    assert_eq!(groups, 5_000);
    assert_eq!(memory_budget, 3 << 20);
    assert_eq!(memory_used, op.memory_used());
    // SUM + AVG over BIGINT with an INT key: well over 16 bytes a group.
    assert!(
        memory_used > empty.memory_used + 5_000 * 16 && memory_used <= memory_budget,
        "{memory_used} bytes for 5000 groups (empty: {})",
        empty.memory_used
    );
}
