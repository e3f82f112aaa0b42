//! State TTL: Flink's idle state retention (processing time,
//! OnCreateAndWrite, NeverReturnExpired) as the operators apply it.

use std::sync::Arc;

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};

fn kv(rows: &[(i32, i64)]) -> RecordBatch {
    let keys: ArrayRef = Arc::new(Int32Array::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let values: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    batch(vec![keys, values])
}

fn sum_plan(emission: Emission, ttl_ms: u64) -> AggPlan {
    let mut p = plan(
        SqlType::of("INT"),
        vec![call("SUM", Some((1, SqlType::of("BIGINT"))))],
        emission,
    );
    p.state_ttl_ms = ttl_ms;
    p
}

#[test]
fn immediate_state_expires_a_ttl_after_its_last_write() {
    let mut op = GroupAggOperator::new(sum_plan(Emission::Immediate, 1_000)).unwrap();
    let at = |op: &mut GroupAggOperator, t: i64, rows: &[(i32, i64)]| {
        op.set_time(t).unwrap();
        opt_rows(op.process(&kv(rows)).unwrap())
    };
    assert_eq!(at(&mut op, 0, &[(1, 5)]), strs(&["+I[1, 5]"]));
    // Written at 500: alive until 1499.
    assert_eq!(at(&mut op, 500, &[(1, 3)]), strs(&["-U[1, 5]", "+U[1, 8]"]));
    assert_eq!(
        at(&mut op, 1_499, &[(1, 0)]),
        strs(&["-U[1, 8]", "+U[1, 8]"])
    );
    // Written at 1499; at 2499 it has expired: a first row again.
    assert_eq!(at(&mut op, 2_499, &[(1, 7)]), strs(&["+I[1, 7]"]));
}

#[test]
fn without_ttl_nothing_expires() {
    let mut op = GroupAggOperator::new(sum_plan(Emission::Immediate, 0)).unwrap();
    op.set_time(0).unwrap();
    op.process(&kv(&[(1, 5)])).unwrap();
    op.set_time(i64::MAX / 2).unwrap();
    assert_eq!(
        opt_rows(op.process(&kv(&[(1, 1)])).unwrap()),
        strs(&["-U[1, 5]", "+U[1, 6]"])
    );
}

#[test]
fn mini_batch_and_global_read_expired_state_as_absent() {
    let mut op = GroupAggOperator::new(sum_plan(Emission::MiniBatch, 100)).unwrap();
    op.set_time(0).unwrap();
    op.process(&kv(&[(1, 5)])).unwrap();
    assert_eq!(opt_rows(op.flush().unwrap()), strs(&["+I[1, 5]"]));
    op.set_time(100).unwrap();
    op.process(&kv(&[(1, 2)])).unwrap();
    assert_eq!(opt_rows(op.flush().unwrap()), strs(&["+I[1, 2]"]));

    // Global phase: partial SUM column 1.
    let mut global = sum_plan(Emission::MiniBatch, 100);
    global.phase = aggforge_runtime::types::Phase::Global;
    let mut op = GroupAggOperator::new(global).unwrap();
    op.set_time(0).unwrap();
    op.process(&kv(&[(1, 5)])).unwrap();
    assert_eq!(opt_rows(op.flush().unwrap()), strs(&["+I[1, 5]"]));
    op.set_time(99).unwrap();
    op.process(&kv(&[(1, 1)])).unwrap();
    assert_eq!(
        opt_rows(op.flush().unwrap()),
        strs(&["-U[1, 5]", "+U[1, 6]"])
    );
    op.set_time(199).unwrap();
    op.process(&kv(&[(1, 1)])).unwrap();
    assert_eq!(opt_rows(op.flush().unwrap()), strs(&["+I[1, 1]"]));
}

#[test]
fn a_retraction_for_expired_state_is_dropped() {
    let mut p = sum_plan(Emission::Immediate, 100);
    p.input = InputMode::Retracting;
    let mut op = GroupAggOperator::new(p).unwrap();
    let rows = |kinds: Vec<i8>, values: Vec<i64>| {
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![1; values.len()]));
        batch_with_kinds(vec![keys, Arc::new(Int64Array::from(values))], kinds)
    };
    op.set_time(0).unwrap();
    op.process(&rows(vec![0], vec![5])).unwrap();
    op.set_time(100).unwrap();
    // -D 5 finds no state: dropped; +I 4 starts the group over.
    assert_eq!(
        opt_rows(op.process(&rows(vec![3, 0], vec![5, 4])).unwrap()),
        strs(&["+I[1, 4]"])
    );
}

#[test]
fn sweeps_free_the_memory_of_expired_groups() {
    let mut op = GroupAggOperator::new(sum_plan(Emission::Immediate, 1_000)).unwrap();
    op.set_time(0).unwrap();
    let keys: Vec<(i32, i64)> = (0..20_000).map(|k| (k, 1)).collect();
    for chunk in keys.chunks(1000) {
        op.process(&kv(chunk)).unwrap();
    }
    op.set_time(400).unwrap();
    op.process(&kv(&[(7, 1)])).unwrap(); // key 7 written at 400
    let full = op.memory_used();
    assert_eq!(op.num_groups(), 20_000);
    // The sweep at 1000 clears every group written at 0, then rebuilds.
    op.set_time(1_000).unwrap();
    assert_eq!(op.num_groups(), 1);
    assert!(
        op.memory_used() * 4 < full,
        "{} bytes after the sweep, {full} before",
        op.memory_used()
    );
    // The survivor kept its state and its write time.
    assert_eq!(
        opt_rows(op.process(&kv(&[(7, 1)])).unwrap()),
        strs(&["-U[7, 2]", "+U[7, 3]"])
    );
    op.set_time(2_400).unwrap();
    assert_eq!(op.num_groups(), 0);
    assert_eq!(
        opt_rows(op.process(&kv(&[(7, 1), (9, 1)])).unwrap()),
        strs(&["+I[7, 1]", "+I[9, 1]"])
    );
    // Snapshots hold live groups only.
    let restored = {
        let mut fresh = GroupAggOperator::new(sum_plan(Emission::Immediate, 1_000)).unwrap();
        fresh.restore(&op.snapshot().unwrap()).unwrap();
        fresh.num_groups()
    };
    assert_eq!(restored, 2);
}

#[test]
fn a_rebuild_that_does_not_fit_the_budget_is_skipped() {
    let keys: Vec<(i32, i64)> = (0..15_000).map(|k| (k, 1)).collect();
    let mut probe = GroupAggOperator::new(sum_plan(Emission::Immediate, 1_000)).unwrap();
    probe.set_time(0).unwrap();
    for chunk in keys.chunks(1000) {
        probe.process(&kv(chunk)).unwrap();
    }
    // A budget just above what 15,000 groups use: no room for a second copy.
    let mut plan = sum_plan(Emission::Immediate, 1_000);
    plan.memory_budget_bytes = probe.memory_used() + 64 * 1024;
    let mut op = GroupAggOperator::new(plan).unwrap();
    op.set_time(0).unwrap();
    for chunk in keys[..10_000].chunks(1000) {
        op.process(&kv(chunk)).unwrap();
    }
    op.set_time(600).unwrap();
    for chunk in keys[10_000..].chunks(1000) {
        op.process(&kv(chunk)).unwrap();
    }
    // The sweep at 1200 (half a TTL after the one at 600) clears the 10,000
    // groups written at 0; the 5,000 written at 600 stay.
    op.set_time(1_200).unwrap();
    assert_eq!(op.num_groups(), 5_000);
    assert_eq!(op.compactions_skipped(), 1);
    assert_eq!(
        opt_rows(op.process(&kv(&[(0, 1), (14_999, 1)])).unwrap()),
        strs(&["+I[0, 1]", "-U[14999, 1]", "+U[14999, 2]"])
    );
}
