//! Two-phase DISTINCT: Flink's distinct MapView partial as an Arrow column,
//! shared by the DISTINCT calls over one argument (Flink's DistinctInfo),
//! and the per-call `{key, count}` lists the DISTINCT view template
//! (`templates::distinct`) merges.
//!
//! A view column is `List<Struct<key, value>>`, one list per group, an entry
//! per value; `value` is what Flink's MapView holds for the value
//! (DistinctAggCodeGen's DistinctValueGenerator):
//! - insert-only input, at most 64 calls: an Int64 whose bit `i` says the
//!   value passed call `i` (its FILTER);
//! - insert-only input, more calls: a List<Int64> of `calls / 64 + 1` such
//!   words;
//! - retracting input, one call: an Int64, the value's net count;
//! - retracting input, more calls: a List<Int64>, one net count per call.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, ListArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, Field, Fields};
use arrow_select::interleave::interleave;
use arrow_select::take::take;

use arrow_array::RecordBatch;

use super::input::Input;
use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::kernel::multiset::{counted_list, read_counted_list};
use crate::plan::{arrow_type, AggPlan};
use crate::types::{InputMode, Phase};

/// The plan's views' layouts and, by call (of `calls` the operator runs),
/// whether the call is in a view.
pub(crate) fn layouts(plan: &AggPlan, calls: usize) -> Result<(Vec<ViewLayout>, Vec<bool>)> {
    let mut in_view = vec![false; calls];
    let mut layouts = Vec::with_capacity(plan.views.len());
    for (v, view) in plan.views.iter().enumerate() {
        let arg = |c: usize| plan.calls[c].arg_types.first().copied();
        let first = arg(view.calls[0]).ok_or_else(|| {
            AggError::Plan(format!(
                "DISTINCT view {v}: call {} has no argument",
                view.calls[0]
            ))
        })?;
        if let Some(&c) = view.calls.iter().find(|&&c| arg(c) != Some(first)) {
            return Err(AggError::Plan(format!(
                "DISTINCT view {v}: call {c} has another argument type than call {}",
                view.calls[0]
            )));
        }
        for &c in &view.calls {
            in_view[c] = true;
        }
        layouts.push(ViewLayout {
            key_type: arrow_type(&first),
            calls: view.calls.len(),
            retracting: plan.input == InputMode::Retracting,
        });
    }
    Ok((layouts, in_view))
}

/// The partial columns a call reads or writes itself: a call in a view
/// leaves out the view's list, the last of its partials.
pub(crate) fn own_partials<T>(mut partials: Vec<T>, in_view: bool) -> Vec<T> {
    if in_view {
        partials.pop();
    }
    partials
}

/// Global phase: appends to each viewed call's partial columns its list,
/// split from its view's column in `batch`.
pub(crate) fn split_input(
    plan: &AggPlan,
    layouts: &[ViewLayout],
    batch: &RecordBatch,
    input: &mut Input<'_>,
) -> Result<()> {
    debug_assert_eq!(plan.phase, Phase::Global);
    for (v, (view, layout)) in plan.views.iter().zip(layouts).enumerate() {
        let index = view.column.unwrap_or(usize::MAX);
        if index >= batch.num_columns() {
            return Err(AggError::Input(format!(
                "DISTINCT view {v} is column {index} but the batch has only {} columns",
                batch.num_columns()
            )));
        }
        let column = batch.column(index);
        if !column.data_type().equals_datatype(&layout.data_type()) {
            return Err(AggError::Input(format!(
                "DISTINCT view {v} (column {index}) has type {}, the plan promised {}",
                column.data_type(),
                layout.data_type()
            )));
        }
        for (slot, &c) in view.calls.iter().enumerate() {
            let list = layout.split(column, slot)?;
            input.args[c].push(list);
        }
        input.views.push(column.clone());
    }
    Ok(())
}

/// Local phase: the partial columns of `groups` in Flink's layout, every
/// call's own partials in call order, then the view columns (a DISTINCT
/// call's view list leaves its partials for its view's column).
pub(crate) fn partials_with_views(
    plan: &AggPlan,
    layouts: &[ViewLayout],
    accs: &[Box<dyn GroupAccumulator>],
    in_view: &[bool],
    groups: &[u32],
) -> Result<(Vec<ArrayRef>, Vec<ArrayRef>)> {
    let mut own = Vec::new();
    let mut lists = vec![None; accs.len()];
    for (c, acc) in accs.iter().enumerate() {
        let mut partials = acc.partials(groups)?;
        if in_view[c] {
            lists[c] = partials.pop();
        }
        own.extend(partials);
    }
    Ok((own, join_output(plan, layouts, lists)?))
}

/// Local phase: the view columns, in the plan's order, of the viewed
/// calls' lists (`lists[c]` is call `c`'s).
fn join_output(
    plan: &AggPlan,
    layouts: &[ViewLayout],
    mut lists: Vec<Option<ArrayRef>>,
) -> Result<Vec<ArrayRef>> {
    let mut columns = Vec::with_capacity(layouts.len());
    for (view, layout) in plan.views.iter().zip(layouts) {
        let mut members = Vec::with_capacity(view.calls.len());
        for &c in &view.calls {
            let list = lists
                .get_mut(c)
                .and_then(Option::take)
                .ok_or_else(|| AggError::Plan(format!("call {c} has no DISTINCT view list")))?;
            members.push(list);
        }
        columns.push(layout.join(&members)?);
    }
    Ok(columns)
}

/// The Arrow layout of one view's partial column.
#[derive(Debug, Clone)]
pub(crate) struct ViewLayout {
    /// Arrow type of the values (the calls' argument).
    pub key_type: DataType,
    /// Number of calls sharing the view.
    pub calls: usize,
    /// Whether the input retracts (counts) or not (bits).
    pub retracting: bool,
}

impl ViewLayout {
    /// One Int64 per entry (else a list of them).
    fn packed(&self) -> bool {
        if self.retracting {
            self.calls == 1
        } else {
            self.calls <= 64
        }
    }

    /// Int64 words per entry: one per call over retracting input; else one
    /// up to 64 calls and Flink's `calls / 64 + 1` beyond.
    pub fn words(&self) -> usize {
        if self.retracting {
            self.calls
        } else if self.packed() {
            1
        } else {
            self.calls / 64 + 1
        }
    }

    fn value_type(&self) -> DataType {
        if self.packed() {
            DataType::Int64
        } else {
            DataType::List(Arc::new(Field::new("item", DataType::Int64, false)))
        }
    }

    fn entry_fields(&self) -> Fields {
        Fields::from(vec![
            Field::new("key", self.key_type.clone(), true),
            Field::new("value", self.value_type(), false),
        ])
    }

    /// The Arrow type of the view column.
    pub fn data_type(&self) -> DataType {
        DataType::List(Arc::new(Field::new(
            "item",
            DataType::Struct(self.entry_fields()),
            false,
        )))
    }

    /// The view column of the calls' `{key, count}` lists (`lists[i]` is
    /// call `i`'s, all over the same groups): an entry per value any call
    /// holds, with its bits or counts.
    pub fn join(&self, lists: &[ArrayRef]) -> Result<ArrayRef> {
        if lists.len() != self.calls {
            return Err(AggError::Plan(format!(
                "a DISTINCT view of {} calls got {} lists",
                self.calls,
                lists.len()
            )));
        }
        let read: Vec<_> = lists
            .iter()
            .map(|l| read_counted_list(l, "DISTINCT view"))
            .collect::<Result<_>>()?;
        let rows = read[0].0.len() - 1;
        let words = self.words();
        // Entries in output order: (list, entry) of the key, and the words.
        let mut sources: Vec<(usize, usize)> = Vec::new();
        let mut values: Vec<i64> = Vec::new();
        let mut lengths = Vec::with_capacity(rows);
        let converted = if self.calls > 1 {
            let converter = RowConverter::new(vec![SortField::new(self.key_type.clone())])?;
            let mut all = Vec::with_capacity(read.len());
            for (_, keys, _) in &read {
                all.push(converter.convert_columns(&[(*keys).clone()])?);
            }
            Some(all)
        } else {
            None
        };
        for row in 0..rows {
            let first = sources.len();
            let mut index: HashMap<&[u8], usize> = HashMap::new();
            for (call, (offsets, _, counts)) in read.iter().enumerate() {
                if offsets.len() != rows + 1 {
                    return Err(AggError::Plan(
                        "the lists of a DISTINCT view cover different groups".into(),
                    ));
                }
                for e in offsets[row] as usize..offsets[row + 1] as usize {
                    let slot = match &converted {
                        None => sources.len(),
                        Some(all) => match index.entry(all[call].row(e).data()) {
                            Entry::Occupied(o) => *o.get(),
                            Entry::Vacant(v) => *v.insert(sources.len()),
                        },
                    };
                    if slot == sources.len() {
                        sources.push((call, e));
                        values.extend(std::iter::repeat_n(0, words));
                    }
                    let word = &mut values[slot * words..(slot + 1) * words];
                    let count = counts.value(e);
                    if self.retracting {
                        word[call] = count;
                    } else if count > 0 {
                        word[call / 64] |= 1i64 << (call % 64);
                    }
                }
            }
            lengths.push(sources.len() - first);
        }
        let children: Vec<&dyn Array> = read.iter().map(|(_, keys, _)| keys.as_ref()).collect();
        let keys = interleave(&children, &sources)?;
        self.column(keys, values, lengths)
    }

    /// A view column of `keys` (all groups' entries), their `values`
    /// ([`words`](Self::words) per entry) and each group's entry count.
    pub fn column(
        &self,
        keys: ArrayRef,
        values: Vec<i64>,
        lengths: Vec<usize>,
    ) -> Result<ArrayRef> {
        let entries = keys.len();
        let value: ArrayRef = if self.packed() {
            Arc::new(Int64Array::from(values))
        } else {
            Arc::new(ListArray::try_new(
                Arc::new(Field::new("item", DataType::Int64, false)),
                OffsetBuffer::from_lengths(std::iter::repeat_n(self.words(), entries)),
                Arc::new(Int64Array::from(values)),
                None,
            )?)
        };
        let entries = StructArray::try_new(self.entry_fields(), vec![keys, value], None)?;
        Ok(Arc::new(ListArray::try_new(
            Arc::new(Field::new(
                "item",
                DataType::Struct(self.entry_fields()),
                false,
            )),
            OffsetBuffer::from_lengths(lengths),
            Arc::new(entries),
            None,
        )?))
    }

    /// The words of a view column's entry values (`value`, the entries'
    /// second field), downcast once.
    pub fn words_of<'a>(&self, value: &'a ArrayRef) -> Result<ViewWords<'a>> {
        let bad = |what: &str| AggError::Input(format!("DISTINCT view column: {what}"));
        let (words, lists) = if self.packed() {
            (value.as_any().downcast_ref::<Int64Array>(), None)
        } else {
            let lists = value
                .as_any()
                .downcast_ref::<ListArray>()
                .ok_or_else(|| bad("values are not lists"))?;
            (
                lists.values().as_any().downcast_ref::<Int64Array>(),
                Some(lists),
            )
        };
        Ok(ViewWords {
            words: words.ok_or_else(|| bad("values are not Int64"))?,
            lists,
            per_entry: self.words(),
        })
    }

    /// Call `call`'s `{key, count}` list of a view column: its count of
    /// each value (1 where its bit is set), entries of count 0 and NULL
    /// values (which no aggregate folds) left out.
    pub fn split(&self, view: &ArrayRef, call: usize) -> Result<ArrayRef> {
        let bad = |what: &str| AggError::Input(format!("DISTINCT view column: {what}"));
        let list = view
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| bad("not a list"))?;
        let entries = list
            .values()
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| bad("entries are not structs"))?;
        if entries.num_columns() != 2 {
            return Err(bad("entries are not {key, value}"));
        }
        let keys = entries.column(0);
        let words = self.words_of(entries.column(1))?;
        let at = if self.retracting { call } else { call / 64 };
        let word = |e: usize| words.word(e, at);
        let offsets = list.value_offsets();
        let mut picked = Vec::new();
        let mut counts = Vec::new();
        let mut lengths = Vec::with_capacity(list.len());
        for row in 0..list.len() {
            let before = picked.len();
            for e in offsets[row] as usize..offsets[row + 1] as usize {
                if keys.is_null(e) {
                    continue;
                }
                let w = word(e)?;
                let count = if self.retracting {
                    w
                } else {
                    (w >> (call % 64)) & 1
                };
                if count != 0 {
                    picked.push(e as u32);
                    counts.push(count);
                }
            }
            lengths.push(picked.len() - before);
        }
        let keys = take(keys.as_ref(), &arrow_array::UInt32Array::from(picked), None)?;
        counted_list(&self.key_type, keys, counts, lengths)
    }
}

/// The Int64 words of a view column's entries: one per entry, or a list.
pub(crate) struct ViewWords<'a> {
    words: &'a Int64Array,
    lists: Option<&'a ListArray>,
    per_entry: usize,
}

impl ViewWords<'_> {
    /// Word `at` of entry `e`.
    pub fn word(&self, e: usize, at: usize) -> Result<i64> {
        let Some(lists) = self.lists else {
            return Ok(self.words.value(e));
        };
        let (start, end) = (lists.value_offsets()[e], lists.value_offsets()[e + 1]);
        if ((end - start) as usize) < self.per_entry {
            return Err(AggError::Input(
                "DISTINCT view column: a value has too few words".into(),
            ));
        }
        Ok(self.words.value(start as usize + at))
    }

    /// Every word of entry `e`.
    pub fn all(&self, e: usize) -> Result<Vec<u64>> {
        (0..self.per_entry)
            .map(|at| self.word(e, at).map(|w| w as u64))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::multiset::counted_list;
    use arrow_array::{Int32Array, StringArray};

    fn list(keys: Vec<i32>, counts: Vec<i64>, lengths: Vec<usize>) -> ArrayRef {
        counted_list(
            &DataType::Int32,
            Arc::new(Int32Array::from(keys)),
            counts,
            lengths,
        )
        .unwrap()
    }

    fn entries(column: &ArrayRef, row: usize) -> Vec<(i32, i64)> {
        let (offsets, keys, counts) = read_counted_list(column, "test").unwrap();
        let keys = keys.as_any().downcast_ref::<Int32Array>().unwrap();
        (offsets[row] as usize..offsets[row + 1] as usize)
            .map(|e| (keys.value(e), counts.value(e)))
            .collect()
    }

    #[test]
    fn insert_only_views_join_into_bits_and_split_back() {
        let layout = ViewLayout {
            key_type: DataType::Int32,
            calls: 2,
            retracting: false,
        };
        // Group 0: call 0 saw 1, 2; call 1 saw 2, 3. Group 1: only call 1 saw 7.
        let a = list(vec![1, 2], vec![1, 3], vec![2, 0]);
        let b = list(vec![2, 3, 7], vec![1, 1, 2], vec![2, 1]);
        let view = layout.join(&[a, b]).unwrap();
        assert_eq!(view.data_type(), &layout.data_type());
        let list = view.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(list.value_offsets(), &[0, 3, 4]);
        let values = list
            .values()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let bits = values
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(bits.values(), &[0b01, 0b11, 0b10, 0b10]);
        let call0 = layout.split(&view, 0).unwrap();
        assert_eq!(entries(&call0, 0), vec![(1, 1), (2, 1)]);
        assert_eq!(entries(&call0, 1), vec![]);
        let call1 = layout.split(&view, 1).unwrap();
        assert_eq!(entries(&call1, 0), vec![(2, 1), (3, 1)]);
        assert_eq!(entries(&call1, 1), vec![(7, 1)]);
    }

    #[test]
    fn retracting_views_keep_signed_counts() {
        for calls in [1usize, 3] {
            let layout = ViewLayout {
                key_type: DataType::Int32,
                calls,
                retracting: true,
            };
            let lists: Vec<ArrayRef> = (0..calls)
                .map(|c| list(vec![5, 6], vec![-1, c as i64 + 1], vec![2]))
                .collect();
            let view = layout.join(&lists).unwrap();
            for c in 0..calls {
                let split = layout.split(&view, c).unwrap();
                assert_eq!(entries(&split, 0), vec![(5, -1), (6, c as i64 + 1)]);
            }
        }
    }

    #[test]
    fn more_than_64_insert_only_calls_use_words() {
        let layout = ViewLayout {
            key_type: DataType::Utf8,
            calls: 70,
            retracting: false,
        };
        let lists: Vec<ArrayRef> = (0..70)
            .map(|c| {
                let key = if c == 69 { "late" } else { "all" };
                counted_list(
                    &DataType::Utf8,
                    Arc::new(StringArray::from(vec![key])),
                    vec![1],
                    vec![1],
                )
                .unwrap()
            })
            .collect();
        let view = layout.join(&lists).unwrap();
        let split = layout.split(&view, 69).unwrap();
        let (offsets, keys, _) = read_counted_list(&split, "test").unwrap();
        let keys = keys.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(offsets, &[0, 1]);
        assert_eq!(keys.value(0), "late");
        let split = layout.split(&view, 3).unwrap();
        let (_, keys, _) = read_counted_list(&split, "test").unwrap();
        let keys = keys.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(keys.value(0), "all");
    }

    #[test]
    fn sixty_four_insert_only_calls_pack_one_word() {
        // Flink's Long holds up to 64 calls' bits.
        let layout = ViewLayout {
            key_type: DataType::Int32,
            calls: 64,
            retracting: false,
        };
        let lists: Vec<ArrayRef> = (0..64)
            .map(|c| list(vec![c % 2], vec![1], vec![1]))
            .collect();
        let view = layout.join(&lists).unwrap();
        assert_eq!(view.data_type(), &layout.data_type());
        assert_eq!(entries(&layout.split(&view, 63).unwrap(), 0), vec![(1, 1)]);
        assert_eq!(entries(&layout.split(&view, 62).unwrap(), 0), vec![(0, 1)]);
    }

    #[test]
    fn a_null_value_reaches_no_call() {
        let layout = ViewLayout {
            key_type: DataType::Int32,
            calls: 1,
            retracting: false,
        };
        let keys = Arc::new(Int32Array::from(vec![None, Some(4)]));
        let view = layout.column(keys, vec![1, 1], vec![2]).unwrap();
        let split = layout.split(&view, 0).unwrap();
        assert_eq!(entries(&split, 0), vec![(4, 1)]);
    }
}
