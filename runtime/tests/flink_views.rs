//! DISTINCT views in Flink's layout: a change batch carries each group's
//! whole view (Flink's `distinctAcc_<i>` map) after the calls' own
//! accumulator columns, and a cache emptied into a backend of such rows
//! continues exactly as unbounded state.

use crate::common::*;
use crate::flink_state::{cached_step, Backend, D, I};
use aggforge_runtime::operator::GroupAggOperator;
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{Array, Int32Array, Int64Array, ListArray, RecordBatch, StructArray};
use arrow_schema::DataType;

/// COUNT(DISTINCT v), SUM(DISTINCT v) (one view of two calls) and SUM(v).
fn distinct_plan(emission: Emission, input: InputMode) -> AggPlan {
    let v = || Some((1, SqlType::of("BIGINT")));
    let distinct = |mut c: aggforge_runtime::plan::AggCall| {
        c.distinct = true;
        c
    };
    let mut p = plan(
        SqlType::of("INT"),
        vec![
            distinct(call("COUNT", v())),
            distinct(call("SUM", v())),
            call("SUM", v()),
        ],
        emission,
    );
    p.input = input;
    p
}

/// Flink's accumulator fields but the view: insert-only COUNT, SUM, SUM;
/// retracting COUNT, SUM (sum, count), SUM (sum, count), record counter.
fn acc_types(input: InputMode) -> Vec<SqlType> {
    let n = if input == InputMode::Retracting { 6 } else { 3 };
    vec![SqlType::of("BIGINT"); n]
}

fn bound(emission: Emission, input: InputMode, budget: usize) -> GroupAggOperator {
    let mut p = distinct_plan(emission, input);
    p.memory_budget_bytes = budget;
    let mut op = GroupAggOperator::new(p).unwrap();
    op.bind_flink_state_with_views(&acc_types(input), 1)
        .unwrap();
    op
}

#[test]
fn a_change_batch_carries_each_groups_view_after_its_accumulators() {
    let mut op = bound(Emission::Immediate, InputMode::InsertOnly, 64 << 20);
    op.process(&kind_rows(
        &[
            (I, 1, Some(5)),
            (I, 1, Some(5)),
            (I, 1, Some(7)),
            (I, 2, Some(3)),
        ],
        false,
    ))
    .unwrap();
    let changes = op.state_changes().unwrap().unwrap();
    // key, COUNT, SUM, SUM, view, $row_kind
    assert_eq!(changes.num_columns(), 6);
    assert!(matches!(changes.column(4).data_type(), DataType::List(_)));
    let mut out = rows(&changes.project(&[0, 1, 2, 3, 5]).unwrap());
    out.sort();
    assert_eq!(out, strs(&["+I[1, 2, 12, 17]", "+I[2, 1, 3, 3]"]));
    // Key 1's map: 5 and 7, each with the bits of both calls (0b11).
    let key1 = (0..2)
        .find(|&r| {
            changes
                .column(0)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap()
                .value(r)
                == 1
        })
        .unwrap();
    let views = changes
        .column(4)
        .as_any()
        .downcast_ref::<ListArray>()
        .unwrap();
    let entries = views.value(key1);
    let entries = entries.as_any().downcast_ref::<StructArray>().unwrap();
    let int64 = |i: usize| {
        entries
            .column(i)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .clone()
    };
    let mut map: Vec<(i64, i64)> = int64(0)
        .values()
        .iter()
        .copied()
        .zip(int64(1).values().iter().copied())
        .collect();
    map.sort();
    assert_eq!(map, vec![(5, 0b11), (7, 0b11)]);
    // A view count that is not Flink's is refused.
    let mut other =
        GroupAggOperator::new(distinct_plan(Emission::Immediate, InputMode::InsertOnly)).unwrap();
    let refused = other
        .bind_flink_state_with_views(&acc_types(InputMode::InsertOnly), 0)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("1 DISTINCT views"), "{refused}");
}

#[test]
fn a_cache_of_distinct_views_gives_the_changelog_of_unbounded_state() {
    for input in [InputMode::InsertOnly, InputMode::Retracting] {
        for emission in [Emission::Immediate, Emission::MiniBatch] {
            let mut next = xorshift(7);
            let retracting = input == InputMode::Retracting;
            let batches: Vec<RecordBatch> = (0..60)
                .map(|_| {
                    let rows: Vec<(i8, i32, Option<i64>)> = (0..200)
                        .map(|_| {
                            let r = next();
                            let kind = if retracting && r.is_multiple_of(5) {
                                D
                            } else {
                                I
                            };
                            (kind, (r >> 8) as i32 % 2_000, Some((r >> 20) as i64 % 12))
                        })
                        .collect();
                    kind_rows(&rows, retracting)
                })
                .collect();
            let mut unbounded = bound(emission, input, 64 << 20);
            let mut cached = bound(emission, input, 256 * 1024);
            let mut backend = Backend::default();
            let flush = emission == Emission::MiniBatch;
            for batch in &batches {
                let mut expected = opt_rows(unbounded.process(batch).unwrap());
                if flush {
                    expected.extend(opt_rows(unbounded.flush().unwrap()));
                }
                assert_eq!(
                    cached_step(&mut cached, &mut backend, batch, flush),
                    expected,
                    "{input:?} {emission:?}"
                );
                assert!(cached.memory_used() <= 256 * 1024);
            }
            assert!(
                cached.evictions() >= 3,
                "{input:?} {emission:?}: {} evictions",
                cached.evictions()
            );
        }
    }
}
