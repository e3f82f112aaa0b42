//! Calls whose accumulator holds data views, in Flink's layout. MIN/MAX
//! over retracting input: each call's accumulator is Flink's structured
//! `(min | max, mapSize, map)`, its map a map state (`agg<i>$map`). A change
//! batch carries the struct per call, its map holding only the entries
//! changed since the last write-back (a count of 0: the entry left the
//! map); a cache emptied into a backend that applies those entries
//! continues exactly as unbounded state. LISTAGG over retracting input:
//! `(list, retractList[, delimiter])`, the lists list states written whole
//! and read back as they are.

use crate::common::*;
use crate::flink_state::{cached_step, ModelBackend, D, I};
use crate::flink_views::EntryBackend;
use aggforge_runtime::operator::{FlinkField, GroupAggOperator};
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, RecordBatch, StructArray};
use std::sync::Arc;

/// MIN(v), MAX(v) over retracting input.
fn extremes_plan(emission: Emission) -> AggPlan {
    let v = || Some((1, SqlType::of("BIGINT")));
    let mut p = plan(
        SqlType::of("INT"),
        vec![call("MIN", v()), call("MAX", v())],
        emission,
    );
    p.input = InputMode::Retracting;
    p
}

/// Flink's accumulator fields: the two structured accumulators, then the
/// record counter.
fn acc_fields() -> Vec<FlinkField> {
    vec![
        FlinkField::StateViews,
        FlinkField::StateViews,
        FlinkField::Type(SqlType::of("BIGINT")),
    ]
}

fn bound(emission: Emission, budget: usize) -> GroupAggOperator {
    let mut p = extremes_plan(emission);
    p.memory_budget_bytes = budget;
    let mut op = GroupAggOperator::new(p).unwrap();
    op.bind_flink_state_with_views(&acc_fields(), 0).unwrap();
    op
}

/// Row `row` of a change batch's struct column `column`: the extreme,
/// `mapSize` and the map's entries, sorted.
fn accumulator(
    changes: &RecordBatch,
    column: usize,
    row: usize,
) -> (Option<i64>, i64, Vec<(i64, i64)>) {
    let acc = changes
        .column(column)
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let extremes = acc.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let sizes = acc.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
    let maps = acc.column(2).as_any().downcast_ref::<ListArray>().unwrap();
    (
        extremes.is_valid(row).then(|| extremes.value(row)),
        sizes.value(row),
        sorted_entries(&maps.value(row)),
    )
}

fn sorted_entries(entries: &ArrayRef) -> Vec<(i64, i64)> {
    let entries = entries.as_any().downcast_ref::<StructArray>().unwrap();
    let column = |i: usize| {
        entries
            .column(i)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    };
    let mut out: Vec<(i64, i64)> = column(0).into_iter().zip(column(1)).collect();
    out.sort();
    out
}

fn row_of(changes: &RecordBatch, key: i32) -> usize {
    let keys = changes
        .column(0)
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    (0..keys.len()).find(|&r| keys.value(r) == key).unwrap()
}

#[test]
fn a_write_back_carries_only_the_map_entries_that_changed() {
    let mut op = bound(Emission::Immediate, 64 << 20);
    op.process(&kind_rows(
        &[
            (I, 1, Some(5)),
            (I, 1, Some(7)),
            (I, 1, Some(5)),
            (I, 2, Some(3)),
        ],
        true,
    ))
    .unwrap();
    let changes = op.state_changes().unwrap().unwrap();
    // key, MIN's struct, MAX's struct, record counter, $row_kind
    assert_eq!(changes.num_columns(), 5);
    let key1 = row_of(&changes, 1);
    assert_eq!(
        accumulator(&changes, 1, key1),
        (Some(5), 2, vec![(5, 2), (7, 1)])
    );
    assert_eq!(
        accumulator(&changes, 2, key1),
        (Some(7), 2, vec![(5, 2), (7, 1)])
    );
    op.state_changes_written();
    // Key 1 loses its maximum and gains 9; key 2 is untouched.
    op.process(&kind_rows(&[(D, 1, Some(7)), (I, 1, Some(9))], true))
        .unwrap();
    let changes = op.state_changes().unwrap().unwrap();
    assert_eq!(changes.num_rows(), 1);
    assert_eq!(
        accumulator(&changes, 1, 0),
        (Some(5), 2, vec![(7, 0), (9, 1)])
    );
    assert_eq!(
        accumulator(&changes, 2, 0),
        (Some(9), 2, vec![(7, 0), (9, 1)])
    );
    // A group whose count reaches 0 is cleared (-D); when it comes back
    // before the next write-back, its old entries travel as removed.
    op.state_changes_written();
    op.process(&kind_rows(&[(D, 2, Some(3)), (I, 2, Some(4))], true))
        .unwrap();
    let changes = op.state_changes().unwrap().unwrap();
    assert_eq!(
        accumulator(&changes, 1, row_of(&changes, 2)),
        (Some(4), 1, vec![(3, 0), (4, 1)])
    );
}

#[test]
fn a_retracting_extreme_binds_only_where_flink_keeps_a_structured_accumulator() {
    let mut op = GroupAggOperator::new(extremes_plan(Emission::Immediate)).unwrap();
    let plain = vec![FlinkField::Type(SqlType::of("BIGINT")); 3];
    let refused = op
        .bind_flink_state_with_views(&plain, 0)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("Flink's accState holds"), "{refused}");
    // SUM keeps no data view: a structured field there is refused too.
    let mut sum = {
        let mut p = plan(
            SqlType::of("INT"),
            vec![call("SUM", Some((1, SqlType::of("BIGINT"))))],
            Emission::Immediate,
        );
        p.input = InputMode::Retracting;
        GroupAggOperator::new(p).unwrap()
    };
    assert!(sum
        .bind_flink_state_with_views(&[FlinkField::StateViews, FlinkField::StateViews], 0)
        .is_err());
}

#[test]
fn a_cache_of_retracting_extremes_gives_the_changelog_of_unbounded_state() {
    for emission in [Emission::Immediate, Emission::MiniBatch] {
        let mut next = xorshift(11);
        let batches: Vec<RecordBatch> = (0..60)
            .map(|_| {
                let rows: Vec<(i8, i32, Option<i64>)> = (0..200)
                    .map(|_| {
                        let r = next();
                        // Retractions of values a group may not hold too:
                        // Flink keeps their negative counts.
                        let kind = if r.is_multiple_of(4) { D } else { I };
                        (kind, (r >> 8) as i32 % 2_000, Some((r >> 20) as i64 % 15))
                    })
                    .collect();
                kind_rows(&rows, true)
            })
            .collect();
        let mut unbounded = bound(emission, 64 << 20);
        let mut cached = bound(emission, 256 * 1024);
        let mut backend = EntryBackend::default();
        let flush = emission == Emission::MiniBatch;
        for (i, batch) in batches.iter().enumerate() {
            let mut expected = opt_rows(unbounded.process(batch).unwrap());
            if flush {
                expected.extend(opt_rows(unbounded.flush().unwrap()));
            }
            assert_eq!(
                cached_step(&mut cached, &mut backend, batch, flush),
                expected,
                "{emission:?} batch {i}"
            );
            assert!(cached.memory_used() <= 256 * 1024);
            // A checkpoint every few batches writes the changed entries.
            if i % 7 == 6 {
                backend.write(cached.state_changes().unwrap());
                cached.state_changes_written();
            }
        }
        assert!(
            cached.evictions() >= 3,
            "{emission:?}: {} evictions",
            cached.evictions()
        );
    }
}

/// LISTAGG(v) over retracting input, `v` a string.
fn listagg_bound() -> GroupAggOperator {
    let mut p = plan(
        SqlType::of("INT"),
        vec![call("LISTAGG", Some((1, SqlType::of("STRING"))))],
        Emission::Immediate,
    );
    p.input = InputMode::Retracting;
    let mut op = GroupAggOperator::new(p).unwrap();
    op.bind_flink_state_with_views(
        &[
            FlinkField::StateViews,
            FlinkField::Type(SqlType::of("BIGINT")),
        ],
        0,
    )
    .unwrap();
    op
}

fn string_rows(rows: &[(i8, i32, &str)]) -> RecordBatch {
    batch_with_kinds(
        vec![
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(arrow_array::StringArray::from_iter_values(
                rows.iter().map(|r| r.2),
            )),
        ],
        rows.iter().map(|r| r.0).collect(),
    )
}

/// Row 0's `list` and `retractList` of a LISTAGG change batch.
fn lists(changes: &RecordBatch) -> (Vec<String>, Vec<String>) {
    let acc = changes
        .column(1)
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let list = |c: usize| -> Vec<String> {
        let lists = acc.column(c).as_any().downcast_ref::<ListArray>().unwrap();
        let values = lists.value(0);
        let values = values
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        values.iter().map(|v| v.unwrap().to_string()).collect()
    };
    (list(0), list(1))
}

#[test]
fn listagg_keeps_flinks_retract_list_and_loads_it_as_it_is() {
    let mut op = listagg_bound();
    // "c" is retracted before it arrives: Flink's retractList keeps it
    // (in the single phase too), and the later "c" joins the list.
    op.process(&string_rows(&[
        (I, 1, "a"),
        (I, 1, "b"),
        (D, 1, "c"),
        (I, 1, "c"),
    ]))
    .unwrap();
    let changes = op.state_changes().unwrap().unwrap();
    assert_eq!(lists(&changes), (strs(&["a", "b", "c"]), strs(&["c"])));
    // Read back into a fresh operator: the lists as they are (a merge
    // would cancel the "c"s).
    let mut fresh = listagg_bound();
    fresh.load_state(&changes).unwrap();
    let out = fresh
        .process(&string_rows(&[(I, 1, "d")]))
        .unwrap()
        .unwrap();
    assert_eq!(rows(&out), strs(&["-U[1, a,b,c]", "+U[1, a,b,c,d]"]));
    assert_eq!(
        lists(&fresh.state_changes().unwrap().unwrap()),
        (strs(&["a", "b", "c", "d"]), strs(&["c"]))
    );
}
