//! A GROUP BY without aggregate calls (SELECT DISTINCT, or a GROUP BY
//! whose aggregates the planner removed): each key emits +I once and then
//! nothing over insert-only input; over retracting input it emits -D when
//! its record count reaches zero, as Flink's GroupAggFunction does.

use crate::common::*;
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, Phase, SqlType};

const I: i8 = 0;
const UB: i8 = 1;
const UA: i8 = 2;
const D: i8 = 3;

fn keys_only(emission: Emission, input: InputMode) -> AggPlan {
    let mut p = plan(SqlType::of("INT"), Vec::new(), emission);
    p.input = input;
    p
}

#[test]
fn insert_only_emits_each_key_once() {
    let rows = [
        (I, 1, Some(1)),
        (I, 2, None),
        (I, 1, Some(3)),
        (I, 3, Some(4)),
    ];
    let mut op =
        GroupAggOperator::new(keys_only(Emission::Immediate, InputMode::InsertOnly)).unwrap();
    assert_eq!(
        op.output_schema().fields().len(),
        2,
        "the key and the row kind"
    );
    assert_eq!(
        run_immediate(&mut op, &[kind_rows(&rows, false), kind_rows(&rows, false)]),
        strs(&["+I[1]", "+I[2]", "+I[3]"])
    );
    let mut op =
        GroupAggOperator::new(keys_only(Emission::MiniBatch, InputMode::InsertOnly)).unwrap();
    let mut out = run_bundles(&mut op, &[vec![kind_rows(&rows, false)]]);
    out.sort();
    assert_eq!(out, strs(&["+I[1]", "+I[2]", "+I[3]"]));
    assert!(run_bundles(&mut op, &[vec![kind_rows(&rows, false)]]).is_empty());
}

#[test]
fn retracting_input_deletes_a_key_at_record_count_zero() {
    let rows = [
        (I, 1, Some(1)),
        (I, 1, Some(2)),
        (UB, 1, Some(1)),
        (UA, 2, Some(5)),
        (D, 1, Some(2)),
        (D, 9, Some(9)),
    ];
    let mut op =
        GroupAggOperator::new(keys_only(Emission::Immediate, InputMode::Retracting)).unwrap();
    assert_eq!(
        run_immediate(&mut op, &[kind_rows(&rows, true)]),
        strs(&["+I[1]", "+I[2]", "-D[1]"])
    );
}

#[test]
fn two_phase_plans_without_calls_are_refused_with_a_reason() {
    let mut p = keys_only(Emission::MiniBatch, InputMode::InsertOnly);
    p.phase = Phase::Local;
    let error = GroupAggOperator::new(p).unwrap_err().to_string();
    assert!(error.contains("without aggregate calls"), "{error}");
}
