//! LISTAGG over retracting input, as Flink's ListAggWithRetractAggFunction
//! and ListAggWsWithRetractAggFunction keep it: per group the live values
//! in arrival order and the separator of the latest non-NULL row
//! (initially `,`).
//!
//! A retraction removes the first live value equal to it (Java
//! `List.remove`: byte equality); one never seen changes nothing here
//! (Flink parks it in `retractList`, which only its merge reads, and
//! these functions stay in one phase). The result is the values joined
//! with the separator, NULL when none is live or the separator is NULL.

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
    items: Vec<Vec<Box<[u8]>>>,
    delim: Vec<u32>,
    delimiters: Delimiters,
    /// Heap bytes of the lists (entries and payloads).
    payload: usize,
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

    fn heap(list: &[Box<[u8]>]) -> usize {
        list.iter().map(|v| v.len()).sum::<usize>() + list.len() * ENTRY_BYTES
    }

    /// Grows (or shrinks) to `n` groups; new groups are empty.
    pub fn resize(&mut self, n: usize) {
        let dropped: usize = self.items.iter().skip(n).map(|l| Self::heap(l)).sum();
        self.payload -= dropped;
        self.items.resize_with(n, Vec::new);
        self.delim.resize(n, 0);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        *self = StringLists::default();
    }

    /// Empties the listed groups.
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            let g = g as usize;
            if g < self.items.len() {
                self.payload -= Self::heap(&self.items[g]);
                self.items[g] = Vec::new();
                self.delim[g] = 0;
            }
        }
    }

    /// Bytes held, lists included.
    pub fn memory_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Vec<Box<[u8]>>>()
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
        }
    }

    fn result(&self, g: usize) -> Option<Vec<u8>> {
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

    /// The snapshot column types: each group's live values and separator.
    pub fn state_types() -> Vec<DataType> {
        vec![DataType::List(Arc::new(Self::item())), DataType::Utf8]
    }

    fn item() -> Field {
        Field::new("item", DataType::Utf8, false)
    }

    /// Snapshot columns of the listed groups.
    pub fn snapshot(&self, groups: &[u32], name: &str) -> Result<Vec<ArrayRef>> {
        let mut values: Vec<&str> = Vec::new();
        let mut lengths = Vec::with_capacity(groups.len());
        for &g in groups {
            let list = &self.items[super::group_index(g, self.items.len(), name)?];
            lengths.push(list.len());
            for value in list {
                values.push(utf8(value)?);
            }
        }
        let lists = ListArray::try_new(
            Arc::new(Self::item()),
            OffsetBuffer::from_lengths(lengths),
            Arc::new(StringArray::from(values)),
            None,
        )?;
        let separators = self
            .delimiters
            .column(groups.iter().map(|&g| self.delim[g as usize]))?;
        Ok(vec![Arc::new(lists), separators])
    }

    /// Sets the listed groups from snapshot columns, checked before any
    /// group changes.
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let [lists, separators] = state else {
            return Err(AggError::Input(format!(
                "{name}: expected two state columns (the live values, the separator), got {}",
                state.len()
            )));
        };
        let lists = lists
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: the live values are not a list")))?;
        let strings = lists
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: the live values are not Utf8")))?;
        let separators = separators
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: the separators are not Utf8")))?;
        if lists.len() != groups.len() || strings.null_count() > 0 {
            return Err(AggError::Input(format!(
                "{name}: {} lists (NULL values: {}) for {} groups",
                lists.len(),
                strings.null_count(),
                groups.len()
            )));
        }
        for &g in groups {
            super::group_index(g, self.items.len(), name)?;
        }
        let offsets = lists.value_offsets();
        for (i, &g) in groups.iter().enumerate() {
            let g = g as usize;
            self.payload -= Self::heap(&self.items[g]);
            let list: Vec<Box<[u8]>> = (offsets[i] as usize..offsets[i + 1] as usize)
                .map(|e| strings.value(e).as_bytes().into())
                .collect();
            self.payload += Self::heap(&list);
            self.items[g] = list;
            let separator = separators
                .is_valid(i)
                .then(|| separators.value(i).as_bytes());
            self.delim[g] = self.delimiters.intern(separator);
        }
        Ok(())
    }
}
