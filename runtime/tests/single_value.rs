//! SINGLE_VALUE's failure: a second value for a key fails the query with
//! Flink's message after exactly the changes Flink emits before it
//! (immediate mode: the rows before the failing one; mini-batch: the
//! groups before the failing one in the bundle's HashMap order; two-phase:
//! a local bundle's partials before the failing key, nothing from a global
//! bundle whose partials fail as they arrive, a global flush's changes
//! before the failing key), and the operator then refuses every call,
//! snapshots included.

use crate::common::*;
use aggforge_runtime::error::AggError;
use aggforge_runtime::kernel::single::SINGLE_VALUE_ERROR;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::RecordBatch;

const I: i8 = 0;
const UB: i8 = 1;
const UA: i8 = 2;
const D: i8 = 3;

fn single_value(emission: Emission, input: InputMode) -> AggPlan {
    let mut p = plan(
        SqlType::of("INT"),
        vec![call("SINGLE_VALUE", Some((1, SqlType::of("BIGINT"))))],
        emission,
    );
    p.input = input;
    p
}

fn assert_failed(op: &mut GroupAggOperator) {
    assert_eq!(op.failure(), Some(SINGLE_VALUE_ERROR));
    let again = op.process(&kind_rows(&[(I, 9, Some(9))], false));
    assert!(matches!(again, Err(AggError::Failed(ref m)) if m == SINGLE_VALUE_ERROR));
    assert!(matches!(op.flush(), Err(AggError::Failed(_))));
    assert!(matches!(op.snapshot(), Err(AggError::Failed(_))));
}

#[test]
fn immediate_emits_the_rows_before_the_second_value() {
    let mut op =
        GroupAggOperator::new(single_value(Emission::Immediate, InputMode::InsertOnly)).unwrap();
    let first = op
        .process(&kind_rows(&[(I, 1, Some(10)), (I, 2, None)], false))
        .unwrap();
    assert_eq!(opt_rows(first), strs(&["+I[1, 10]", "+I[2, NULL]"]));
    assert_eq!(op.failure(), None);
    // NULL is a value: key 2's second row fails, after key 3's row.
    let out = op
        .process(&kind_rows(
            &[(I, 3, Some(30)), (I, 2, Some(20)), (I, 4, Some(40))],
            false,
        ))
        .unwrap();
    assert_eq!(opt_rows(out), strs(&["+I[3, 30]"]));
    assert_failed(&mut op);
}

#[test]
fn immediate_over_retractions_fails_only_past_one_live_value() {
    let mut op =
        GroupAggOperator::new(single_value(Emission::Immediate, InputMode::Retracting)).unwrap();
    let out = op
        .process(&kind_rows(
            &[
                (I, 1, Some(1)),
                (UB, 1, Some(1)),
                (UA, 1, Some(2)),
                (I, 2, Some(5)),
                (D, 2, Some(5)),
                (I, 2, Some(6)),
                (I, 1, Some(3)),
                (I, 3, Some(7)),
            ],
            true,
        ))
        .unwrap();
    assert_eq!(
        opt_rows(out),
        strs(&[
            // -U empties key 1 (record count 0): Flink emits -D, then +I.
            "+I[1, 1]", "-D[1, 1]", "+I[1, 2]", "+I[2, 5]", "-D[2, 5]", "+I[2, 6]",
        ])
    );
    assert_failed(&mut op);
}

#[test]
fn mini_batch_emits_the_groups_before_the_failed_one_in_flush_order() {
    let rows = [
        (I, 1, Some(1)),
        (I, 2, Some(2)),
        (I, 3, Some(3)),
        (I, 4, Some(4)),
    ];
    // The same bundle without the failing row: its flush order.
    let mut clean =
        GroupAggOperator::new(single_value(Emission::MiniBatch, InputMode::InsertOnly)).unwrap();
    let order = run_bundles(&mut clean, &[vec![kind_rows(&rows, false)]]);
    assert_eq!(order.len(), 4);
    for failing_key in 1..=4 {
        let mut op =
            GroupAggOperator::new(single_value(Emission::MiniBatch, InputMode::InsertOnly))
                .unwrap();
        let mut bundle = rows.to_vec();
        bundle.insert(2, (I, failing_key, Some(99)));
        assert!(op.process(&kind_rows(&bundle, false)).unwrap().is_none());
        let out = opt_rows(op.flush().unwrap());
        let at = order
            .iter()
            .position(|r| r.starts_with(&format!("+I[{failing_key},")))
            .unwrap();
        assert_eq!(out, order[..at].to_vec(), "failing key {failing_key}");
        assert_failed(&mut op);
    }
}

fn local_and_global(input: InputMode) -> (GroupAggOperator, GroupAggOperator) {
    let (local, global) = two_phase_plans(&single_value(Emission::MiniBatch, input));
    (
        GroupAggOperator::new(local).unwrap(),
        GroupAggOperator::new(global).unwrap(),
    )
}

/// One local bundle's partials.
fn local_partials(local: &mut GroupAggOperator, rows: &[(i8, i32, Option<i64>)]) -> RecordBatch {
    assert!(local.process(&kind_rows(rows, false)).unwrap().is_none());
    local.flush().unwrap().unwrap()
}

#[test]
fn local_flush_emits_the_partials_before_the_failed_key_in_flush_order() {
    let rows = [
        (I, 1, Some(1)),
        (I, 2, Some(2)),
        (I, 3, None),
        (I, 4, Some(4)),
    ];
    let (mut clean, _) = local_and_global(InputMode::InsertOnly);
    let order = opt_rows(Some(local_partials(&mut clean, &rows)));
    assert_eq!(order.len(), 4);
    for failing_key in 1..=4 {
        let (mut local, _) = local_and_global(InputMode::InsertOnly);
        let mut bundle = rows.to_vec();
        bundle.insert(1, (I, failing_key, Some(99)));
        assert!(local.process(&kind_rows(&bundle, false)).unwrap().is_none());
        let out = opt_rows(local.flush().unwrap());
        let at = order
            .iter()
            .position(|r| r.starts_with(&format!("+I[{failing_key},")))
            .unwrap();
        assert_eq!(out, order[..at].to_vec(), "failing key {failing_key}");
        assert_failed(&mut local);
    }
}

#[test]
fn global_fails_at_the_partial_that_brings_a_second_value() {
    let (mut local, mut global) = local_and_global(InputMode::InsertOnly);
    let first = local_partials(&mut local, &[(I, 1, Some(10)), (I, 2, Some(20))]);
    let second = local_partials(&mut local, &[(I, 3, Some(30)), (I, 1, Some(11))]);
    assert!(global.process(&first).unwrap().is_none());
    assert_eq!(global.failure(), None);
    // Key 1's second partial in the same global bundle: Flink's addInput
    // throws, the bundle emits nothing.
    assert!(global.process(&second).unwrap().is_none());
    assert_failed(&mut global);
}

#[test]
fn global_flush_emits_the_changes_before_the_failed_key_in_flush_order() {
    let (mut local, mut clean) = local_and_global(InputMode::InsertOnly);
    let bundle = [
        (I, 3, Some(30)),
        (I, 1, Some(11)),
        (I, 4, Some(40)),
        (I, 5, None),
    ];
    let partials = local_partials(&mut local, &bundle);
    assert!(clean.process(&partials).unwrap().is_none());
    let order = opt_rows(clean.flush().unwrap());
    assert_eq!(order.len(), 4);
    for failing_key in [1, 3, 4, 5] {
        let (mut local, mut global) = local_and_global(InputMode::InsertOnly);
        let earlier = local_partials(&mut local, &[(I, failing_key, Some(7))]);
        assert!(global.process(&earlier).unwrap().is_none());
        assert_eq!(
            opt_rows(global.flush().unwrap()),
            [format!("+I[{failing_key}, 7]")]
        );
        let partials = local_partials(&mut local, &bundle);
        assert!(global.process(&partials).unwrap().is_none());
        assert_eq!(global.failure(), None);
        let out = opt_rows(global.flush().unwrap());
        let at = order
            .iter()
            .position(|r| r.starts_with(&format!("+I[{failing_key},")))
            .unwrap();
        assert_eq!(out, order[..at].to_vec(), "failing key {failing_key}");
        assert_failed(&mut global);
    }
}

/// Over retracting input the counts cancel: a key whose value was
/// retracted in one local bundle takes a new one in the next, and the
/// global phase follows Flink's merge (a partial of count 0 holding the
/// value of a retract-then-accumulate bundle).
#[test]
fn two_phase_over_retractions_merges_flinks_counts() {
    let (mut local, mut global) = local_and_global(InputMode::Retracting);
    let mut out = Vec::new();
    for rows in [
        vec![(I, 1, Some(10)), (I, 2, Some(20))],
        vec![(D, 1, Some(10)), (I, 1, Some(11))],
        // Retract then accumulate in one bundle: partial (12, 0).
        vec![
            (D, 2, Some(20)),
            (I, 2, Some(21)),
            (UB, 1, Some(11)),
            (UA, 1, Some(12)),
        ],
    ] {
        assert!(local.process(&kind_rows(&rows, true)).unwrap().is_none());
        let partials = local.flush().unwrap().unwrap();
        assert!(global.process(&partials).unwrap().is_none());
        out.extend(opt_rows(global.flush().unwrap()));
    }
    assert_eq!(global.failure(), None);
    let key = |row: &String| row[3..].split(',').next().unwrap().to_string();
    let for_key =
        |k: &str| -> Vec<String> { out.iter().filter(|r| key(r) == k).cloned().collect() };
    assert_eq!(
        for_key("1"),
        strs(&[
            "+I[1, 10]",
            "-U[1, 10]",
            "+U[1, 11]",
            "-U[1, 11]",
            "+U[1, 12]"
        ])
    );
    assert_eq!(for_key("2"), strs(&["+I[2, 20]", "-U[2, 20]", "+U[2, 21]"]));
}
