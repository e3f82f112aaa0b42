//! MIN/MAX over retracting input in Flink's layout: each call's accumulator
//! is Flink's structured `(min | max, mapSize, map)`, its map a map state
//! (`agg<i>$map`). A change batch carries the struct per call, its map
//! holding only the entries changed since the last write-back (a count of
//! 0: the entry left the map); a cache emptied into a backend that applies
//! those entries continues exactly as unbounded state.

use crate::common::*;
use crate::flink_state::{cached_step, ModelBackend, D, I};
use aggforge_runtime::operator::{FlinkField, GroupAggOperator};
use aggforge_runtime::plan::{AggPlan, Emission};
use aggforge_runtime::types::{InputMode, SqlType};
use arrow_array::{
    Array, ArrayRef, Int32Array, Int64Array, Int8Array, ListArray, RecordBatch, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, SchemaRef};
use std::collections::{BTreeMap, HashMap};
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
        let mut backend = MapBackend::default();
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

/// The state backend of the cache test as Flink's keeps it: per key the
/// accumulator row and, per structured column, the map state, to which a
/// change row's entries apply one by one (a count of 0 is removed), while a
/// row read back carries the whole maps.
#[derive(Default)]
struct MapBackend {
    schema: Option<SchemaRef>,
    /// Key -> (the change row, per struct column its map: value -> count).
    rows: HashMap<i32, (RecordBatch, BTreeMap<usize, HashMap<i64, i64>>)>,
}

/// The change batch's struct (accumulator) columns.
fn struct_columns(schema: &SchemaRef) -> Vec<usize> {
    (0..schema.fields().len())
        .filter(|&c| matches!(schema.field(c).data_type(), DataType::Struct(_)))
        .collect()
}

impl ModelBackend for MapBackend {
    fn write(&mut self, changes: Option<RecordBatch>) {
        let Some(changes) = changes else { return };
        let schema = changes.schema();
        self.schema = Some(schema.clone());
        let keys = changes
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        let kinds = changes
            .column(changes.num_columns() - 1)
            .as_any()
            .downcast_ref::<Int8Array>()
            .unwrap();
        for i in 0..changes.num_rows() {
            if kinds.value(i) == D {
                self.rows.remove(&keys.value(i));
                continue;
            }
            let entry = self
                .rows
                .entry(keys.value(i))
                .or_insert_with(|| (changes.slice(i, 1), BTreeMap::new()));
            entry.0 = changes.slice(i, 1);
            for c in struct_columns(&schema) {
                let acc = changes
                    .column(c)
                    .as_any()
                    .downcast_ref::<StructArray>()
                    .unwrap();
                let maps = acc.column(2).as_any().downcast_ref::<ListArray>().unwrap();
                let map = entry.1.entry(c).or_default();
                for (value, count) in sorted_entries(&maps.value(i)) {
                    if count == 0 {
                        map.remove(&value);
                    } else {
                        map.insert(value, count);
                    }
                }
            }
        }
    }

    /// The rows (whole maps) of those of `keys` the backend holds.
    fn read(&self, keys: &RecordBatch) -> Option<RecordBatch> {
        let schema = self.schema.clone()?;
        let keys = keys
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        let mut rows = Vec::new();
        for key in keys.iter().flatten() {
            let Some((row, maps)) = self.rows.get(&key) else {
                continue;
            };
            let mut columns: Vec<ArrayRef> = row.columns().to_vec();
            for (&c, map) in maps {
                columns[c] = with_whole_map(&columns[c], map);
            }
            rows.push(RecordBatch::try_new(schema.clone(), columns).unwrap());
        }
        let first = rows.first()?.schema();
        Some(arrow_select::concat::concat_batches(&first, &rows).unwrap())
    }
}

/// A one-row struct column `acc` with its map replaced by `map`.
fn with_whole_map(acc: &ArrayRef, map: &HashMap<i64, i64>) -> ArrayRef {
    let acc = acc.as_any().downcast_ref::<StructArray>().unwrap();
    let lists = acc.column(2).as_any().downcast_ref::<ListArray>().unwrap();
    let DataType::List(item) = lists.data_type() else {
        panic!("{}", lists.data_type())
    };
    let DataType::Struct(fields) = item.data_type() else {
        panic!("{item}")
    };
    let mut entries: Vec<(i64, i64)> = map.iter().map(|(&k, &c)| (k, c)).collect();
    entries.sort();
    let values = Int64Array::from_iter_values(entries.iter().map(|e| e.0));
    let counts = Int64Array::from_iter_values(entries.iter().map(|e| e.1));
    let entries_array = StructArray::try_new(
        fields.clone(),
        vec![Arc::new(values), Arc::new(counts)],
        None,
    )
    .unwrap();
    let list = ListArray::try_new(
        item.clone(),
        OffsetBuffer::from_lengths([entries.len()]),
        Arc::new(entries_array),
        None,
    )
    .unwrap();
    let mut columns = acc.columns().to_vec();
    columns[2] = Arc::new(list);
    Arc::new(StructArray::try_new(acc.fields().clone(), columns, None).unwrap())
}
