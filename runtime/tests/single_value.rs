//! SINGLE_VALUE's failure: a second value for a key fails the query with
//! Flink's message after exactly the changes Flink emits before it
//! (immediate mode: the rows before the failing one; mini-batch: the
//! groups before the failing one in the bundle's HashMap order), and the
//! operator then refuses every call, snapshots included.

mod common;

use aggforge_runtime::error::AggError;
use aggforge_runtime::kernel::single::SINGLE_VALUE_ERROR;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use common::*;

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
