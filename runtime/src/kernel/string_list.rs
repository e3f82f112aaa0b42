//! LISTAGG over retracting input, as Flink's ListAggWithRetractAggFunction
//! and ListAggWsWithRetractAggFunction keep it: per group the live values
//! in arrival order and the separator of the latest non-NULL row
//! (initially `,`).
//!
//! A retraction removes the first live value equal to it (Java
//! `List.remove`: byte equality); one that is not live goes to the
//! group's `retractList`, which only Flink's merge reads: it is kept when
//! the call merges partials (local and global phases, [`StringLists::
//! set_merging`]) and not in the single phase, where it changes nothing.
//! The result is the values joined with the separator, NULL when none is
//! live or the separator is NULL. Two-phase partials and their merge:
//! `string_list_partial.rs`.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, ListArray, StringArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};

use super::concat::{utf8, Delimiters, Separators};
use super::rows::Rows;
use super::GroupIds;
use crate::error::{AggError, Result};

/// Bytes of one live value beyond its payload: the boxed slice.
const ENTRY_BYTES: usize = std::mem::size_of::<Box<[u8]>>();

/// Columnar LISTAGG lists.
#[derive(Debug, Default)]
pub struct StringLists {
    /// Each group's live values, in arrival order (Flink's `list`).
    pub(super) items: Vec<Vec<Box<[u8]>>>,
    /// Each group's separator, an index into `delimiters`.
    pub(super) delim: Vec<u32>,
    pub(super) delimiters: Delimiters,
    /// Each group's retracted values that were not live (Flink's
    /// `retractList`), kept when `merging`; else empty.
    pub(super) retracts: Vec<Vec<Box<[u8]>>>,
    /// Whether the call merges partials (local or global phase).
    pub(super) merging: bool,
    /// Heap bytes of the lists (entries and payloads).
    pub(super) payload: usize,
}

impl StringLists {
    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when no group is held.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Inline bytes per group.
    pub fn bytes_per_group() -> usize {
        std::mem::size_of::<Vec<Box<[u8]>>>() + 4
    }

    /// Bytes one folded row may add beyond its value's bytes (which the
    /// operator accounts from the argument column).
    pub fn bytes_per_row() -> usize {
        2 * ENTRY_BYTES
    }

    /// Keeps each group's `retractList` (a call in the local or global
    /// phase); set once, on a fresh state.
    pub fn set_merging(&mut self) {
        self.merging = true;
    }

    /// Whether each group's `retractList` is kept.
    pub fn merging(&self) -> bool {
        self.merging
    }

    pub(super) fn heap(list: &[Box<[u8]>]) -> usize {
        list.iter().map(|v| v.len()).sum::<usize>() + list.len() * ENTRY_BYTES
    }

    /// Grows (or shrinks) to `n` groups; new groups are empty.
    pub fn resize(&mut self, n: usize) {
        let dropped: usize = self
            .items
            .iter()
            .skip(n)
            .map(|l| Self::heap(l))
            .sum::<usize>()
            + self
                .retracts
                .iter()
                .skip(n)
                .map(|l| Self::heap(l))
                .sum::<usize>();
        self.payload -= dropped;
        self.items.resize_with(n, Vec::new);
        self.delim.resize(n, 0);
        if self.merging {
            self.retracts.resize_with(n, Vec::new);
        }
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        *self = StringLists {
            merging: self.merging,
            ..StringLists::default()
        };
    }

    /// Empties the listed groups.
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            let g = g as usize;
            if g < self.items.len() {
                self.payload -= Self::heap(&self.items[g]);
                self.items[g] = Vec::new();
                self.delim[g] = 0;
                if let Some(retracts) = self.retracts.get_mut(g) {
                    self.payload -= Self::heap(retracts);
                    *retracts = Vec::new();
                }
            }
        }
    }

    /// Bytes held, lists included.
    pub fn memory_bytes(&self) -> usize {
        (self.items.capacity() + self.retracts.capacity()) * std::mem::size_of::<Vec<Box<[u8]>>>()
            + self.delim.capacity() * 4
            + self.payload
            + self.delimiters.memory_bytes()
    }

    #[inline]
    fn fold(&mut self, g: usize, separator: Option<&[u8]>, value: &[u8], retract: bool) {
        self.delim[g] = self.delimiters.intern(separator);
        let list = &mut self.items[g];
        if !retract {
            list.push(value.into());
            self.payload += value.len() + ENTRY_BYTES;
        } else if let Some(at) = list.iter().position(|v| **v == *value) {
            list.remove(at);
            self.payload -= value.len() + ENTRY_BYTES;
        } else if self.merging {
            self.retracts[g].push(value.into());
            self.payload += value.len() + ENTRY_BYTES;
        }
    }

    pub(super) fn result(&self, g: usize) -> Option<Vec<u8>> {
        let list = &self.items[g];
        let separator = self.delimiters.get(self.delim[g])?;
        let (first, rest) = list.split_first()?;
        let mut out = Vec::with_capacity(Self::heap(list) + rest.len() * separator.len());
        out.extend_from_slice(first);
        for value in rest {
            out.extend_from_slice(separator);
            out.extend_from_slice(value);
        }
        Some(out)
    }

    fn fold_row(
        &mut self,
        values: &StringArray,
        separators: &Separators<'_>,
        kinds: Option<&[i8]>,
        i: usize,
        g: usize,
    ) {
        let retract = kinds.is_some_and(|k| super::is_retract(k[i]));
        self.fold(g, separators.get(i), values.value(i).as_bytes(), retract);
    }

    /// Folds the selected rows (value non-NULL, FILTER true) in order;
    /// rows `kinds` marks -U/-D retract.
    pub fn update(
        &mut self,
        values: &StringArray,
        separators: Separators<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
        kinds: Option<&[i8]>,
    ) {
        let ids = groups.ids();
        rows.for_each(|i| self.fold_row(values, &separators, kinds, i, ids[i] as usize));
    }

    /// Folds like [`StringLists::update`] and returns each row's result
    /// right after it, setting `changed` where it differs from before.
    #[allow(clippy::too_many_arguments)]
    pub fn update_traced(
        &mut self,
        values: &StringArray,
        separators: Separators<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
        kinds: Option<&[i8]>,
        changed: &mut [bool],
        name: &str,
    ) -> Result<ArrayRef> {
        super::trace_rows::<super::Utf8>(
            rows,
            groups.ids(),
            changed,
            name,
            &DataType::Utf8,
            |a, b| a == b,
            |i, g, selected| {
                let before = self.result(g);
                if selected {
                    self.fold_row(values, &separators, kinds, i, g);
                }
                (before, self.result(g))
            },
        )
    }

    /// The joined lists of the listed groups.
    pub fn evaluate(&self, groups: &[u32], name: &str) -> Result<ArrayRef> {
        let joined = groups
            .iter()
            .map(|&g| Ok(self.result(super::group_index(g, self.items.len(), name)?)))
            .collect::<Result<Vec<_>>>()?;
        let values = joined
            .iter()
            .map(|v| v.as_deref().map(utf8).transpose())
            .collect::<Result<Vec<Option<&str>>>>()?;
        Ok(Arc::new(StringArray::from(values)))
    }

    /// The snapshot column types: each group's live values and separator,
    /// then, when merging, its `retractList`.
    pub fn state_types(&self) -> Vec<DataType> {
        let mut types = vec![DataType::List(Arc::new(Self::item())), DataType::Utf8];
        if self.merging {
            types.push(DataType::List(Arc::new(Self::item())));
        }
        types
    }

    fn item() -> Field {
        Field::new("item", DataType::Utf8, false)
    }

    /// A list column of each listed group's values in `lists`.
    fn list_column(
        lists: &[Vec<Box<[u8]>>],
        groups: &[u32],
        item: Field,
        name: &str,
    ) -> Result<ListArray> {
        let mut values: Vec<&str> = Vec::new();
        let mut lengths = Vec::with_capacity(groups.len());
        for &g in groups {
            let list = &lists[super::group_index(g, lists.len(), name)?];
            lengths.push(list.len());
            for value in list {
                values.push(utf8(value)?);
            }
        }
        Ok(ListArray::try_new(
            Arc::new(item),
            OffsetBuffer::from_lengths(lengths),
            Arc::new(StringArray::from(values)),
            None,
        )?)
    }

    /// Each list of a list column of Utf8 values, as owned values; NULL
    /// lists and values are errors.
    pub(super) fn read_lists(
        column: &ArrayRef,
        what: &str,
        name: &str,
    ) -> Result<Vec<Vec<Box<[u8]>>>> {
        let lists = column
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: {what} is not a list")))?;
        let strings = lists
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: {what} is not a list of Utf8")))?;
        if lists.null_count() > 0 || strings.null_count() > 0 {
            return Err(AggError::Input(format!(
                "{name}: {what} holds a NULL list or value"
            )));
        }
        let offsets = lists.value_offsets();
        Ok((0..lists.len())
            .map(|i| {
                (offsets[i] as usize..offsets[i + 1] as usize)
                    .map(|e| strings.value(e).as_bytes().into())
                    .collect()
            })
            .collect())
    }

    /// Snapshot columns of the listed groups.
    pub fn snapshot(&self, groups: &[u32], name: &str) -> Result<Vec<ArrayRef>> {
        let lists = Self::list_column(&self.items, groups, Self::item(), name)?;
        let separators = self
            .delimiters
            .column(groups.iter().map(|&g| self.delim[g as usize]))?;
        let mut columns: Vec<ArrayRef> = vec![Arc::new(lists), separators];
        if self.merging {
            let retracts = Self::list_column(&self.retracts, groups, Self::item(), name)?;
            columns.push(Arc::new(retracts));
        }
        Ok(columns)
    }

    /// Sets the listed groups from snapshot columns, checked before any
    /// group changes.
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let (lists, separators, retracts) =
            match (state, self.merging) {
                ([lists, separators], false) => (lists, separators, None),
                ([lists, separators, retracts], true) => (lists, separators, Some(retracts)),
                _ => {
                    return Err(AggError::Input(format!(
                    "{name}: expected {} state columns (the live values, the separator{}), got {}",
                    self.state_types().len(),
                    if self.merging { ", the retracted values" } else { "" },
                    state.len()
                )))
                }
            };
        let lists = Self::read_lists(lists, "the live values", name)?;
        let retracts = retracts
            .map(|r| Self::read_lists(r, "the retracted values", name))
            .transpose()?;
        let separators = separators
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: the separators are not Utf8")))?;
        if lists.len() != groups.len() || separators.len() != groups.len() {
            return Err(AggError::Input(format!(
                "{name}: {} lists for {} groups",
                lists.len(),
                groups.len()
            )));
        }
        for &g in groups {
            super::group_index(g, self.items.len(), name)?;
        }
        let mut retracts = retracts.map(Vec::into_iter);
        for ((i, &g), list) in groups.iter().enumerate().zip(lists) {
            let g = g as usize;
            self.payload -= Self::heap(&self.items[g]);
            self.payload += Self::heap(&list);
            self.items[g] = list;
            if let Some(retracted) = retracts.as_mut().and_then(Iterator::next) {
                self.payload -= Self::heap(&self.retracts[g]);
                self.payload += Self::heap(&retracted);
                self.retracts[g] = retracted;
            }
            let separator = separators
                .is_valid(i)
                .then(|| separators.value(i).as_bytes());
            self.delim[g] = self.delimiters.intern(separator);
        }
        Ok(())
    }
}
