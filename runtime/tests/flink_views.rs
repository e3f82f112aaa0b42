//! DISTINCT views in Flink's layout: a change batch carries each group's
//! whole view (Flink's `distinctAcc_<i>` map) after the calls' own
//! accumulator columns, and a cache emptied into a backend of such rows
//! continues exactly as unbounded state.

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
fn acc_types(input: InputMode) -> Vec<FlinkField> {
    let n = if input == InputMode::Retracting { 6 } else { 3 };
    vec![FlinkField::Type(SqlType::of("BIGINT")); n]
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
    // After the write-back only changed entries travel: key 1 sees 5 again
    // (no change) and 9 (new), key 2 nothing.
    op.state_changes_written();
    op.process(&kind_rows(&[(I, 1, Some(5)), (I, 1, Some(9))], false))
        .unwrap();
    let changes = op.state_changes().unwrap().unwrap();
    assert_eq!(changes.num_rows(), 1);
    let views = changes
        .column(4)
        .as_any()
        .downcast_ref::<ListArray>()
        .unwrap();
    let entries = views.value(0);
    let entries = entries.as_any().downcast_ref::<StructArray>().unwrap();
    let int64 = |i: usize| {
        entries
            .column(i)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    };
    assert_eq!((int64(0), int64(1)), (vec![9], vec![0b11]));
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
            let mut backend = EntryBackend::default();
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

/// The state backend of the cache tests with data views, as Flink's keeps
/// them: per key the accumulator row and, per view column, its map state,
/// to which a change row's entries apply one by one (an entry whose value
/// is all 0 is removed), while a row read back carries the whole maps. A
/// view column is a DISTINCT view (a list of `{key, value}` entries) or a
/// structured accumulator whose third field is such a list (MIN/MAX over
/// retractions).
#[derive(Default)]
pub(crate) struct EntryBackend {
    schema: Option<SchemaRef>,
    /// Key -> (the change row, per view column its map).
    rows: HashMap<i32, (RecordBatch, BTreeMap<usize, ViewMap>)>,
}

/// A view's map state: value -> words (bits or counts).
type ViewMap = HashMap<i64, Vec<i64>>;

/// The entries of view column `column` (see [`EntryBackend`]), or `None`
/// for a column that is no view.
fn entry_lists(column: &ArrayRef) -> Option<&ListArray> {
    match column.data_type() {
        DataType::List(_) => column.as_any().downcast_ref::<ListArray>(),
        DataType::Struct(fields) if fields.len() == 3 => column
            .as_any()
            .downcast_ref::<StructArray>()
            .and_then(|acc| acc.column(2).as_any().downcast_ref::<ListArray>()),
        _ => None,
    }
}

/// View column `column` of one row with its entries replaced by `map`.
fn with_whole_map(column: &ArrayRef, map: &HashMap<i64, Vec<i64>>) -> ArrayRef {
    let Some(acc) = column.as_any().downcast_ref::<StructArray>() else {
        return whole_view(column.data_type(), map);
    };
    let mut columns = acc.columns().to_vec();
    columns[2] = whole_view(columns[2].data_type(), map);
    Arc::new(StructArray::try_new(acc.fields().clone(), columns, None).unwrap())
}

impl ModelBackend for EntryBackend {
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
            for (c, column) in changes.columns().iter().enumerate().skip(1) {
                let Some(lists) = entry_lists(column) else {
                    continue;
                };
                let map = entry.1.entry(c).or_default();
                let entries = lists.value(i);
                let entries = entries.as_any().downcast_ref::<StructArray>().unwrap();
                let values = entries
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap();
                for e in 0..entries.len() {
                    let words = words_of(entries.column(1), e);
                    if words.iter().all(|&w| w == 0) {
                        map.remove(&values.value(e));
                    } else {
                        map.insert(values.value(e), words);
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

/// Entry `e`'s words of a view's `value` column (Int64, or a list of them).
fn words_of(value: &ArrayRef, e: usize) -> Vec<i64> {
    match value.as_any().downcast_ref::<Int64Array>() {
        Some(packed) => vec![packed.value(e)],
        None => {
            let lists = value.as_any().downcast_ref::<ListArray>().unwrap();
            let words = lists.value(e);
            words
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        }
    }
}

/// A one-group view column of type `list_type` holding `map`.
fn whole_view(list_type: &DataType, map: &HashMap<i64, Vec<i64>>) -> ArrayRef {
    let DataType::List(item) = list_type else {
        panic!("{list_type}")
    };
    let DataType::Struct(fields) = item.data_type() else {
        panic!("{item}")
    };
    let mut entries: Vec<(&i64, &Vec<i64>)> = map.iter().collect();
    entries.sort();
    let values = Int64Array::from_iter_values(entries.iter().map(|e| *e.0));
    let words: Vec<i64> = entries.iter().flat_map(|e| e.1.iter().copied()).collect();
    let value: ArrayRef = match fields[1].data_type() {
        DataType::Int64 => Arc::new(Int64Array::from(words)),
        DataType::List(word) => {
            let per = entries.first().map_or(1, |e| e.1.len());
            Arc::new(
                ListArray::try_new(
                    word.clone(),
                    OffsetBuffer::from_lengths(std::iter::repeat_n(per, entries.len())),
                    Arc::new(Int64Array::from(words)),
                    None,
                )
                .unwrap(),
            )
        }
        other => panic!("{other}"),
    };
    let entries_array =
        StructArray::try_new(fields.clone(), vec![Arc::new(values), value], None).unwrap();
    Arc::new(
        ListArray::try_new(
            item.clone(),
            OffsetBuffer::from_lengths([entries.len()]),
            Arc::new(entries_array),
            None,
        )
        .unwrap(),
    )
}
