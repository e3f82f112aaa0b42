//! FIRST_VALUE/LAST_VALUE over retracting input: per group the live
//! values in arrival order, as Flink's FirstValueWithRetractAggFunction /
//! LastValueWithRetractAggFunction keep them (`valueToOrderMap`,
//! `orderToValueMap`).
//!
//! Flink orders values by `System.currentTimeMillis()` and, within one
//! millisecond, by position in that millisecond's list: together that is
//! arrival order, which an arrival number per accumulated value gives here
//! exactly. A retraction removes the earliest live arrival of a value
//! equal to it (Java `equals`: floats by `doubleToLongBits`, so -0.0 and
//! 0.0 differ and every NaN is one value); one never seen changes nothing.
//! The result is the first (FIRST_VALUE) or last (LAST_VALUE) live value,
//! NULL when none is left.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, ListArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};

use super::bind::Binding;
use super::multiset::JavaOrd;
use super::rows::Rows;
use crate::error::{AggError, Result};

/// The per-specialization rule of an arrival list, written out by the
/// emitter.
pub trait ArrivalRule: 'static {
    /// Binding of the argument, result and list values.
    type Val: Binding;
    /// FIRST_VALUE (`true`) or LAST_VALUE.
    const FIRST: bool;
    /// Result equality used to suppress unchanged results.
    fn same(a: <Self::Val as Binding>::Ref<'_>, b: <Self::Val as Binding>::Ref<'_>) -> bool;
}

type Owned<R> = <<R as ArrivalRule>::Val as Binding>::Owned;
type Key<R> = <Owned<R> as JavaOrd>::Key;

/// One group's live values.
struct Group<K> {
    /// Live values by arrival number (arrival order).
    live: BTreeMap<u64, K>,
    /// Each live value's arrival numbers, earliest first.
    arrivals: BTreeMap<K, VecDeque<u64>>,
}

impl<K> Default for Group<K> {
    fn default() -> Self {
        Group {
            live: BTreeMap::new(),
            arrivals: BTreeMap::new(),
        }
    }
}

/// Columnar arrival-list state.
pub struct ArrivalLists<R: ArrivalRule>
where
    Owned<R>: JavaOrd,
{
    groups: Vec<Group<Key<R>>>,
    /// The next arrival number (one counter for all groups: only the
    /// order within a group matters).
    next: u64,
    _rule: PhantomData<R>,
}

impl<R: ArrivalRule> fmt::Debug for ArrivalLists<R>
where
    Owned<R>: JavaOrd,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrivalLists")
            .field("groups", &self.groups.len())
            .finish()
    }
}

impl<R: ArrivalRule> Default for ArrivalLists<R>
where
    Owned<R>: JavaOrd,
{
    fn default() -> Self {
        ArrivalLists {
            groups: Vec::new(),
            next: 0,
            _rule: PhantomData,
        }
    }
}

impl<R: ArrivalRule> ArrivalLists<R>
where
    Owned<R>: JavaOrd,
{
    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// True when no group is held.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Inline bytes per group.
    pub fn bytes_per_group() -> usize {
        std::mem::size_of::<Group<Key<R>>>()
    }

    /// Upper bound of the bytes one folded row adds: the value in both
    /// maps, its arrival number twice and the nodes' overhead.
    pub fn bytes_per_row() -> usize {
        2 * std::mem::size_of::<Key<R>>() + 16 + 48
    }

    /// Grows (or shrinks) to `n` groups; new groups are empty.
    pub fn resize(&mut self, n: usize) {
        self.groups.resize_with(n, Group::default);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        self.groups.clear();
    }

    /// Keeps nothing across a reset: nothing to free.
    pub fn release_spare(&mut self) {}

    /// Empties the listed groups.
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            if let Some(group) = self.groups.get_mut(g as usize) {
                *group = Group::default();
            }
        }
    }

    /// Bytes held (entries estimated at [`ArrivalLists::bytes_per_row`]).
    pub fn memory_bytes(&self) -> usize {
        let entries: usize = self.groups.iter().map(|g| g.live.len()).sum();
        self.groups.capacity() * Self::bytes_per_group() + entries * Self::bytes_per_row()
    }

    fn accumulate(&mut self, g: usize, key: Key<R>) {
        let arrival = self.next;
        self.next += 1;
        let group = &mut self.groups[g];
        group.live.insert(arrival, key.clone());
        group.arrivals.entry(key).or_default().push_back(arrival);
    }

    fn retract(group: &mut Group<Key<R>>, key: &Key<R>) {
        let Some(arrivals) = group.arrivals.get_mut(key) else {
            return;
        };
        if let Some(arrival) = arrivals.pop_front() {
            group.live.remove(&arrival);
        }
        if arrivals.is_empty() {
            group.arrivals.remove(key);
        }
    }

    fn result(group: &Group<Key<R>>) -> Option<Owned<R>> {
        let entry = if R::FIRST {
            group.live.first_key_value()
        } else {
            group.live.last_key_value()
        };
        entry.map(|(_, key)| <Owned<R> as JavaOrd>::from_key(key))
    }

    /// Folds the selected rows in order; rows `kinds` marks -U/-D retract.
    pub fn update(
        &mut self,
        column: <R::Val as Binding>::Reader<'_>,
        rows: &Rows,
        group_ids: &[u32],
        kinds: Option<&[i8]>,
    ) {
        rows.for_each(|i| self.fold_row(&column, i, group_ids[i] as usize, kinds));
    }

    fn fold_row(
        &mut self,
        column: &<R::Val as Binding>::Reader<'_>,
        i: usize,
        g: usize,
        kinds: Option<&[i8]>,
    ) {
        let mut value = Owned::<R>::default();
        R::Val::store(&mut value, R::Val::get(column, i));
        let key = value.into_key();
        if kinds.is_some_and(|k| super::is_retract(k[i])) {
            Self::retract(&mut self.groups[g], &key);
        } else {
            self.accumulate(g, key);
        }
    }

    /// Folds like [`ArrivalLists::update`] and returns each row's result
    /// right after it, setting `changed` where it differs from before.
    #[allow(clippy::too_many_arguments)]
    pub fn update_traced(
        &mut self,
        column: <R::Val as Binding>::Reader<'_>,
        rows: &Rows,
        group_ids: &[u32],
        kinds: Option<&[i8]>,
        changed: &mut [bool],
        result_type: &DataType,
        name: &str,
    ) -> Result<ArrayRef> {
        super::trace_rows::<R::Val>(
            rows,
            group_ids,
            changed,
            name,
            result_type,
            R::same,
            |i, g, selected| {
                let before = Self::result(&self.groups[g]);
                if selected {
                    self.fold_row(&column, i, g, kinds);
                }
                (before, Self::result(&self.groups[g]))
            },
        )
    }

    /// The results of the listed groups.
    pub fn evaluate(&self, groups: &[u32], result_type: &DataType, name: &str) -> Result<ArrayRef> {
        let mut out = Vec::with_capacity(groups.len());
        let mut valid = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = super::group_index(g, self.groups.len(), name)?;
            let value = Self::result(&self.groups[g]);
            valid.push(value.is_some());
            out.push(value.unwrap_or_default());
        }
        R::Val::build(out, valid, result_type)
    }

    /// The Arrow types of the snapshot columns: the live values of each
    /// group as a list, in arrival order.
    pub fn state_types(value_type: &DataType) -> Vec<DataType> {
        vec![DataType::List(Arc::new(Self::item(value_type)))]
    }

    fn item(value_type: &DataType) -> Field {
        Field::new("item", value_type.clone(), false)
    }

    /// Snapshot columns of the listed groups.
    pub fn snapshot(
        &self,
        groups: &[u32],
        value_type: &DataType,
        name: &str,
    ) -> Result<Vec<ArrayRef>> {
        let mut values = Vec::new();
        let mut lengths = Vec::with_capacity(groups.len());
        for &g in groups {
            let group = &self.groups[super::group_index(g, self.groups.len(), name)?];
            lengths.push(group.live.len());
            values.extend(group.live.values().map(<Owned<R> as JavaOrd>::from_key));
        }
        let entries = values.len();
        let column = R::Val::build(values, vec![true; entries], value_type)?;
        let list = ListArray::try_new(
            Arc::new(Self::item(value_type)),
            OffsetBuffer::from_lengths(lengths),
            column,
            None,
        )?;
        Ok(vec![Arc::new(list)])
    }

    /// Sets the listed groups from snapshot columns, each list's values
    /// arriving again in order. Checked before any group changes.
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let [lists] = state else {
            return Err(AggError::Input(format!(
                "{name}: expected one state column (the live values), got {}",
                state.len()
            )));
        };
        let lists = lists
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| AggError::Input(format!("{name}: the live values are not a list")))?;
        if lists.len() != groups.len() || lists.values().null_count() > 0 {
            return Err(AggError::Input(format!(
                "{name}: {} lists (NULL values: {}) for {} groups",
                lists.len(),
                lists.values().null_count(),
                groups.len()
            )));
        }
        let values_column = R::Val::prepare(lists.values())?;
        let values = R::Val::bind(&values_column, name)?;
        for &g in groups {
            super::group_index(g, self.groups.len(), name)?;
        }
        let offsets = lists.value_offsets();
        for (i, &g) in groups.iter().enumerate() {
            let g = g as usize;
            self.groups[g] = Group::default();
            for e in offsets[i] as usize..offsets[i + 1] as usize {
                let mut value = Owned::<R>::default();
                R::Val::store(&mut value, R::Val::get(&values, e));
                self.accumulate(g, value.into_key());
            }
        }
        Ok(())
    }

    /// Sets `changed[i]` where two result columns differ.
    pub fn mark_changed(
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
        name: &str,
    ) -> Result<()> {
        super::mark_changed_with::<R::Val>(before, after, changed, name, R::same)
    }
}
