//! MIN/MAX over retracting input: per group a counted multiset of the
//! values seen, the current extreme and the number of values with a
//! positive count, exactly as Flink's MinWithRetractAggFunction /
//! MaxWithRetractAggFunction keep them (`min`/`max`, `mapSize`, `map`).
//!
//! Flink's quirks are kept: a retraction of a value never seen stores a
//! negative count (not counted in `mapSize`); an accumulate takes the value
//! as the extreme when it beats the current one even if it only cancels
//! such a negative count; recomputing the extreme after a retraction scans
//! every key, negative ones included.

use hashbrown::hash_map::Entry;
use hashbrown::{HashMap, HashSet};
use std::cmp::Ordering;
use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, ListArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields};

use super::bind::Binding;
use super::candidates::Candidates;
use super::rows::Rows;
use super::timestamp::Timestamp;
use crate::error::{AggError, Result};

/// A carrier as a multiset key ordered as Java's `compareTo` orders the
/// value (`Double.compare` for floats: -0.0 below 0.0, NaN above all).
pub trait JavaOrd: Clone + fmt::Debug + Send + 'static {
    /// The key type (hashed consistently with its order's equality).
    type Key: Ord + std::hash::Hash + Clone + fmt::Debug + Send + 'static;
    /// The key of a value.
    fn key(&self) -> Self::Key;
    /// The key of a value, taking it (no copy for keys that are the value).
    fn into_key(self) -> Self::Key
    where
        Self: Sized,
    {
        self.key()
    }
    /// The value of a key.
    fn from_key(key: &Self::Key) -> Self;
}

macro_rules! java_ord_identity {
    ($($t:ty),*) => {$(
        impl JavaOrd for $t {
            type Key = $t;
            #[inline]
            fn key(&self) -> $t {
                self.clone()
            }
            #[inline]
            fn into_key(self) -> $t {
                self
            }
            #[inline]
            fn from_key(key: &$t) -> $t {
                key.clone()
            }
        }
    )*};
}

java_ord_identity!(i8, i16, i32, i64, i128, bool, Vec<u8>, Timestamp);

/// An `f64` ordered by `Double.compare` (NaNs collapsed to one, as
/// `doubleToLongBits` does).
#[derive(Debug, Clone, Copy)]
pub struct JavaDouble(pub f64);

impl JavaDouble {
    fn canonical(self) -> f64 {
        if self.0.is_nan() {
            f64::NAN
        } else {
            self.0
        }
    }
}

impl PartialEq for JavaDouble {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for JavaDouble {}

impl std::hash::Hash for JavaDouble {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Equal under `Double.compare` is equal bits once NaNs are one.
        self.canonical().to_bits().hash(state);
    }
}

impl PartialOrd for JavaDouble {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for JavaDouble {
    fn cmp(&self, other: &Self) -> Ordering {
        self.canonical().total_cmp(&other.canonical())
    }
}

impl JavaOrd for f64 {
    type Key = JavaDouble;
    fn key(&self) -> JavaDouble {
        JavaDouble(*self)
    }
    fn from_key(key: &JavaDouble) -> f64 {
        key.0
    }
}

impl JavaOrd for f32 {
    type Key = JavaDouble;
    fn key(&self) -> JavaDouble {
        JavaDouble(f64::from(*self))
    }
    fn from_key(key: &JavaDouble) -> f32 {
        key.0 as f32
    }
}

/// The per-specialization rule of a counted extreme, written out by the
/// emitter.
pub trait MultisetRule: 'static {
    /// Binding of the argument, result and multiset key column.
    type Val: Binding;
    /// MIN (`true`) or MAX.
    const MIN: bool;
    /// Result equality used to suppress unchanged results.
    fn same(a: <Self::Val as Binding>::Ref<'_>, b: <Self::Val as Binding>::Ref<'_>) -> bool;
}

pub(super) type Owned<R> = <<R as MultisetRule>::Val as Binding>::Owned;
pub(super) type Key<R> = <Owned<R> as JavaOrd>::Key;

/// One group's accumulator (Flink's fields).
pub(super) struct Group<K> {
    pub(super) extreme: Option<K>,
    pub(super) map_size: i64,
    /// Counts per value (snapshots list them in key order, partials in
    /// the map's own order).
    pub(super) map: HashMap<K, i64>,
    /// Every value of `map`, best first, and stale ones: the next extreme
    /// when the current one leaves (Flink scans every value there).
    pub(super) candidates: Candidates<K>,
}

impl<K: Clone> Group<K> {
    /// Empties the group, keeping its map's and candidates' allocations.
    fn empty(&mut self) {
        self.extreme = None;
        self.map_size = 0;
        self.map.clear();
        self.candidates.clear();
    }
}

impl<K> Default for Group<K> {
    fn default() -> Self {
        Group {
            extreme: None,
            map_size: 0,
            map: HashMap::new(),
            candidates: Candidates::default(),
        }
    }
}

/// Columnar counted-extreme state.
pub struct CountedExtremes<R: MultisetRule>
where
    Owned<R>: JavaOrd,
{
    pub(super) groups: Vec<Group<Key<R>>>,
    /// Groups emptied by the last [`reset`](Self::reset), their allocations
    /// kept: a local phase's next bundle refills about as many groups, and
    /// growing each map again from nothing was most of its time.
    spare: Vec<Group<Key<R>>>,
    /// With state in Flink's layout: the `(group, value)` map entries
    /// changed since the last write-back (`counted_partial.rs`), each once.
    pub(super) log: Option<HashSet<(u32, Key<R>)>>,
    _rule: PhantomData<R>,
}

impl<R: MultisetRule> fmt::Debug for CountedExtremes<R>
where
    Owned<R>: JavaOrd,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountedExtremes")
            .field("groups", &self.groups.len())
            .finish()
    }
}

impl<R: MultisetRule> Default for CountedExtremes<R>
where
    Owned<R>: JavaOrd,
{
    fn default() -> Self {
        CountedExtremes {
            groups: Vec::new(),
            spare: Vec::new(),
            log: None,
            _rule: PhantomData,
        }
    }
}

/// Records entry `(group, key)` in `log` (if any) unless it is there
/// already (a key is cloned only when new); gives the key back.
pub(super) fn logged<K: Hash + Eq + Clone>(
    log: &mut Option<HashSet<(u32, K)>>,
    group: u32,
    key: K,
) -> K {
    let Some(log) = log else {
        return key;
    };
    let entry = (group, key);
    if !log.contains(&entry) {
        log.insert(entry.clone());
    }
    entry.1
}

/// `a` is a better extreme than `b` (strictly).
pub(super) fn beats<K: Ord>(min: bool, a: &K, b: &K) -> bool {
    if min {
        a < b
    } else {
        a > b
    }
}

impl<R: MultisetRule> CountedExtremes<R>
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

    /// Bytes of one map slot: the entry and its control byte.
    fn bytes_per_slot() -> usize {
        std::mem::size_of::<(Key<R>, i64)>() + 1
    }

    /// Upper bound of the bytes one folded row adds (a new multiset entry
    /// and candidate, with growth to twice the slots amortized).
    pub fn bytes_per_row() -> usize {
        2 * (Self::bytes_per_slot() + std::mem::size_of::<Key<R>>())
    }

    /// `a` is a better extreme than `b`.
    pub(super) fn better(a: &Key<R>, b: &Key<R>) -> bool {
        beats(R::MIN, a, b)
    }

    /// Grows (or shrinks) to `n` groups; new groups are empty (spare
    /// ones first).
    pub fn resize(&mut self, n: usize) {
        let reused = n.saturating_sub(self.groups.len()).min(self.spare.len());
        self.groups
            .extend(self.spare.drain(self.spare.len() - reused..));
        self.groups.resize_with(n, Group::default);
    }

    /// Drops every group, keeping their allocations as spares for the
    /// next groups.
    pub fn reset(&mut self) {
        for group in &mut self.groups {
            group.empty();
        }
        self.spare.append(&mut self.groups);
    }

    /// Frees the spare groups.
    pub fn release_spare(&mut self) {
        self.spare = Vec::new();
    }

    /// Empties the listed groups (a log records their values as gone).
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            if let Some(group) = self.groups.get_mut(g as usize) {
                if let Some(log) = &mut self.log {
                    log.extend(group.map.keys().map(|k| (g, k.clone())));
                }
                *group = Group::default();
            }
        }
    }

    /// Bytes held: the groups, spare ones too, and every map slot
    /// (allocated capacity).
    pub fn memory_bytes(&self) -> usize {
        let groups = || self.groups.iter().chain(&self.spare);
        let slots: usize = groups().map(|g| g.map.capacity()).sum();
        let candidates: usize = groups().map(|g| g.candidates.capacity()).sum();
        let logged = self.log.as_ref().map_or(0, HashSet::capacity);
        (self.groups.capacity() + self.spare.capacity()) * Self::bytes_per_group()
            + slots * Self::bytes_per_slot()
            + logged * (std::mem::size_of::<(u32, Key<R>)>() + 1)
            + candidates * std::mem::size_of::<Key<R>>()
    }

    fn accumulate(group: &mut Group<Key<R>>, key: Key<R>) {
        let take = group.map_size == 0
            || group
                .extreme
                .as_ref()
                .is_none_or(|cur| beats(R::MIN, &key, cur));
        if take {
            group.extreme = Some(key.clone());
        }
        // One lookup: count + 1, an entry at 0 (from -1) removed.
        let count = match group.map.entry(key) {
            Entry::Vacant(slot) => {
                group.candidates.push(slot.key(), Self::better);
                slot.insert(1);
                1
            }
            Entry::Occupied(mut slot) => {
                let count = *slot.get() + 1;
                if count == 0 {
                    slot.remove();
                } else {
                    *slot.get_mut() = count;
                }
                count
            }
        };
        if count == 1 {
            group.map_size += 1;
        }
    }

    fn retract(group: &mut Group<Key<R>>, key: Key<R>) {
        // One lookup: count - 1; a non-zero count (negative too) is kept.
        let removed = match group.map.entry(key) {
            Entry::Vacant(slot) => {
                group.candidates.push(slot.key(), Self::better);
                slot.insert(-1);
                return;
            }
            Entry::Occupied(mut slot) => {
                let count = *slot.get() - 1;
                if count != 0 {
                    *slot.get_mut() = count;
                    return;
                }
                slot.remove_entry().0
            }
        };
        group.map_size -= 1;
        if group.map_size == 0 {
            group.extreme = None;
        } else if group.extreme.as_ref() == Some(&removed) {
            Self::recompute_extreme(group);
        }
        Self::compact(group);
    }

    /// Drops the stale candidates once they outnumber the values.
    pub(super) fn compact(group: &mut Group<Key<R>>) {
        group
            .candidates
            .compact(group.map.len(), group.map.keys(), Self::better);
    }

    /// Flink's `updateMin`/`updateMax`: the extreme over every key, negative
    /// counts too, as Flink iterates them all (here the best candidate still
    /// in the map); an empty map also zeroes `mapSize`.
    pub(super) fn recompute_extreme(group: &mut Group<Key<R>>) {
        let map = &group.map;
        let next = group
            .candidates
            .best(map.keys(), |k| map.contains_key(k), Self::better);
        match next {
            Some(k) => group.extreme = Some(k),
            None => {
                group.map_size = 0;
                group.extreme = None;
            }
        }
    }

    pub(super) fn result(group: &Group<Key<R>>) -> Option<Owned<R>> {
        if group.map_size > 0 {
            group.extreme.as_ref().map(<Owned<R> as JavaOrd>::from_key)
        } else {
            None
        }
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
        let key = logged(&mut self.log, g as u32, value.into_key());
        let group = &mut self.groups[g];
        if kinds.is_some_and(|k| super::is_retract(k[i])) {
            Self::retract(group, key);
        } else {
            Self::accumulate(group, key);
        }
    }

    /// Folds like [`CountedExtremes::update`] and returns each row's result
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

    /// The Arrow types of the snapshot columns: the extreme, `mapSize`, and
    /// the map as a list of `{key, count}`.
    pub fn state_types(value_type: &DataType) -> Vec<DataType> {
        vec![
            value_type.clone(),
            DataType::Int64,
            counted_list_type(value_type),
        ]
    }

    /// Snapshot columns of the listed groups, each map in key order (so a
    /// snapshot's bytes do not depend on the hash map's layout).
    pub fn snapshot(
        &self,
        groups: &[u32],
        value_type: &DataType,
        name: &str,
    ) -> Result<Vec<ArrayRef>> {
        self.columns(groups, value_type, name, true)
    }

    /// The snapshot's columns, each group's map in key order when `sorted`
    /// (else in the hash map's order: partials, which Flink's merge reads
    /// in any order).
    pub(super) fn columns(
        &self,
        groups: &[u32],
        value_type: &DataType,
        name: &str,
        sorted: bool,
    ) -> Result<Vec<ArrayRef>> {
        let mut extremes = Vec::with_capacity(groups.len());
        let mut extreme_valid = Vec::with_capacity(groups.len());
        let mut sizes = Vec::with_capacity(groups.len());
        let mut offsets = Vec::with_capacity(groups.len());
        let mut held = Vec::with_capacity(groups.len());
        for &g in groups {
            held.push(&self.groups[super::group_index(g, self.groups.len(), name)?]);
        }
        let total: usize = held.iter().map(|group| group.map.len()).sum();
        let mut keys = Vec::with_capacity(total);
        let mut counts = Vec::with_capacity(total);
        let mut sorted_entries: Vec<(&Key<R>, i64)> = Vec::new();
        for group in held {
            extreme_valid.push(group.extreme.is_some());
            extremes.push(
                group
                    .extreme
                    .as_ref()
                    .map(<Owned<R> as JavaOrd>::from_key)
                    .unwrap_or_default(),
            );
            sizes.push(group.map_size);
            offsets.push(group.map.len());
            if sorted {
                sorted_entries.clear();
                sorted_entries.extend(group.map.iter().map(|(k, &c)| (k, c)));
                sorted_entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for &(k, c) in &sorted_entries {
                    keys.push(<Owned<R> as JavaOrd>::from_key(k));
                    counts.push(c);
                }
            } else {
                for (k, &c) in &group.map {
                    keys.push(<Owned<R> as JavaOrd>::from_key(k));
                    counts.push(c);
                }
            }
        }
        let entries = keys.len();
        let key_column = R::Val::build(keys, vec![true; entries], value_type)?;
        let map = counted_list(value_type, key_column, counts, offsets)?;
        Ok(vec![
            R::Val::build(extremes, extreme_valid, value_type)?,
            Arc::new(Int64Array::from(sizes)),
            map,
        ])
    }

    /// Sets the listed groups from snapshot columns.
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let [extremes, sizes, map] = state else {
            return Err(AggError::Input(format!(
                "{name}: expected state columns [extreme, map_size, map], got {}",
                state.len()
            )));
        };
        let extreme_values_column = R::Val::prepare(extremes)?;
        let extreme_values = R::Val::bind(&extreme_values_column, name)?;
        let sizes = sizes
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| AggError::Input(format!("{name}: map_size is not Int64")))?;
        let (offsets, key_column, counts) = read_counted_list(map, name)?;
        let keys_column = R::Val::prepare(key_column)?;
        let keys = R::Val::bind(&keys_column, name)?;
        for (i, &g) in groups.iter().enumerate() {
            let g = super::group_index(g, self.groups.len(), name)?;
            let mut group = Group::default();
            if extremes.is_valid(i) {
                let mut value = Owned::<R>::default();
                R::Val::store(&mut value, R::Val::get(&extreme_values, i));
                group.extreme = Some(value.key());
            }
            group.map_size = sizes.value(i);
            for e in offsets[i] as usize..offsets[i + 1] as usize {
                let mut value = Owned::<R>::default();
                R::Val::store(&mut value, R::Val::get(&keys, e));
                group.map.insert(value.into_key(), counts.value(e));
            }
            self.groups[g] = group;
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

/// `{key, count}` of a map entry.
fn entry_fields(value_type: &DataType) -> Fields {
    Fields::from(vec![
        Field::new("key", value_type.clone(), false),
        Field::new("count", DataType::Int64, false),
    ])
}

/// The Arrow type of a snapshot column of counted values per group: a list
/// of `{key, count}` (the multisets here, the DISTINCT views).
pub(crate) fn counted_list_type(value_type: &DataType) -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(entry_fields(value_type)),
        false,
    )))
}

/// A [`counted_list_type`] column: group `i` holds the next `lengths[i]`
/// of the keys and counts.
pub(crate) fn counted_list(
    value_type: &DataType,
    keys: ArrayRef,
    counts: Vec<i64>,
    lengths: Vec<usize>,
) -> Result<ArrayRef> {
    let entries = StructArray::try_new(
        entry_fields(value_type),
        vec![keys, Arc::new(Int64Array::from(counts))],
        None,
    )?;
    let field = Arc::new(Field::new(
        "item",
        DataType::Struct(entry_fields(value_type)),
        false,
    ));
    let list = ListArray::try_new(
        field,
        OffsetBuffer::from_lengths(lengths),
        Arc::new(entries),
        None,
    )?;
    Ok(Arc::new(list))
}

/// The offsets, key column and counts of a [`counted_list`] column.
pub(crate) fn read_counted_list<'a>(
    column: &'a ArrayRef,
    name: &str,
) -> Result<(&'a [i32], &'a ArrayRef, &'a Int64Array)> {
    let list = column
        .as_any()
        .downcast_ref::<ListArray>()
        .ok_or_else(|| AggError::Input(format!("{name}: the counted values are not a list")))?;
    let entries = list
        .values()
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| AggError::Input(format!("{name}: counted entries are not structs")))?;
    let counts = entries
        .column(1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| AggError::Input(format!("{name}: the counts are not Int64")))?;
    Ok((list.value_offsets(), entries.column(0), counts))
}
