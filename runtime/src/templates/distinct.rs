//! `distinct`: the DISTINCT view any template runs under (`AGG(DISTINCT x)`,
//! Flink's DistinctAggCodeGen): per group a map from each value seen to its
//! multiplicity; a row reaches the inner template only when it changes the
//! set of values, so the inner state folds each distinct value once.
//!
//! Flink's rules, kept exactly:
//! - an insert (+I/+U) adds 1 to its value's count and accumulates the value
//!   into the inner aggregate when the count was 0;
//! - a retraction (-U/-D) subtracts 1 and retracts the value from the inner
//!   aggregate when the count was 1; a count reaching 0 removes the entry,
//!   and a retraction of a value never seen keeps a negative count, which a
//!   later insert cancels without accumulating;
//! - values are equal as Java's boxed `equals` says: floats by their bits
//!   with every NaN one value (`doubleToLongBits`), so 0.0 and -0.0 differ;
//!   DECIMAL by unscaled value (one scale per column); strings by bytes.
//!
//! NULLs never reach the inner aggregate (each ignores NULL), so the view
//! skips them. Spec entries with `distinct = true` run under this view when
//! their template declares `distinct_view = true`; the emitter wraps the
//! template's state: `Distinct<Slots<Sum<...>>, Prim<Int64Type>>`.
//!
//! Two phases: a call's partial is the inner template's partial columns and
//! then its view as a list of `{key, count}` per group (the snapshot's
//! layout); the operator joins the views of calls that share Flink's
//! DistinctInfo into Flink's one MapView column (`operator::views`). Merging
//! adds each entry's count to the group's view as Flink's distinct merge
//! does: a value enters the set when its count goes from <= 0 to > 0 and
//! leaves it when its count goes from > 0 to <= 0; the inner partial columns
//! are not read (Flink's global folds the values, not the local results).

use std::borrow::Borrow;
use std::fmt::Debug;
use std::hash::{BuildHasher, Hash};

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, BooleanArray};
use arrow_buffer::BooleanBufferBuilder;
use arrow_schema::DataType;
use hashbrown::HashTable;

use super::{bind_argument, AccSpec, TemplateState};
use crate::accumulator::BatchUpdate;
use crate::error::{AggError, Result};
use crate::kernel::multiset::{counted_list, counted_list_type, read_counted_list};
use crate::kernel::{
    is_retract, Binding, Bool, Dec128, Dec64, GroupIds, Prim, Timestamp, Ts, Utf8,
};

/// A carrier as a key of a DISTINCT view: hashed and compared as Flink's
/// MapView compares boxed values, probed without allocating.
pub trait ViewKey: Binding {
    /// The key as held.
    type Key: Hash + Eq + Borrow<Self::Probe> + Clone + Debug + Send + 'static;
    /// The key as probed (borrowed bytes for strings).
    type Probe: Hash + Eq + ?Sized;
    /// Calls `f` with the probe of a read value.
    fn with_probe<T>(value: Self::Ref<'_>, f: impl FnOnce(&Self::Probe) -> T) -> T;
    /// The key of a read value, owned (on first insertion only).
    fn key(value: Self::Ref<'_>) -> Self::Key;
    /// The value of a key, as held in state (for snapshots).
    fn value(key: &Self::Key) -> Self::Owned;
    /// Heap bytes a key holds beyond its inline size.
    fn key_heap(_key: &Self::Key) -> usize {
        0
    }
}

/// A primitive carrier's key: the value, or for floats its bits with NaN
/// canonical (`Double.equals`).
pub trait NativeKey: Copy {
    /// The hashable key.
    type Key: Hash + Eq + Copy + Debug + Send + 'static;
    /// The key of a value.
    fn key(self) -> Self::Key;
    /// The value of a key.
    fn value(key: Self::Key) -> Self;
}

macro_rules! native_key_identity {
    ($($t:ty),*) => {$(
        impl NativeKey for $t {
            type Key = $t;
            #[inline(always)]
            fn key(self) -> $t {
                self
            }
            #[inline(always)]
            fn value(key: $t) -> $t {
                key
            }
        }
    )*};
}

native_key_identity!(i8, i16, i32, i64, i128, bool, Timestamp);

impl NativeKey for f64 {
    type Key = u64;
    #[inline(always)]
    fn key(self) -> u64 {
        if self.is_nan() {
            f64::NAN.to_bits()
        } else {
            self.to_bits()
        }
    }
    #[inline(always)]
    fn value(key: u64) -> f64 {
        f64::from_bits(key)
    }
}

impl NativeKey for f32 {
    type Key = u32;
    #[inline(always)]
    fn key(self) -> u32 {
        if self.is_nan() {
            f32::NAN.to_bits()
        } else {
            self.to_bits()
        }
    }
    #[inline(always)]
    fn value(key: u32) -> f32 {
        f32::from_bits(key)
    }
}

/// [`ViewKey`] for a binding whose values are `Copy` natives.
macro_rules! copy_view_key {
    ($binding:ty, $native:ty $(, $generic:ident: $bound:path)?) => {
        impl$(<$generic: $bound>)? ViewKey for $binding
        where
            $native: NativeKey,
            $(<$generic as ArrowPrimitiveType>::Native: Default,)?
        {
            type Key = <$native as NativeKey>::Key;
            type Probe = <$native as NativeKey>::Key;
            #[inline(always)]
            fn with_probe<Out>(value: $native, f: impl FnOnce(&Self::Probe) -> Out) -> Out {
                f(&value.key())
            }
            #[inline(always)]
            fn key(value: $native) -> Self::Key {
                value.key()
            }
            #[inline(always)]
            fn value(key: &Self::Key) -> $native {
                <$native as NativeKey>::value(*key)
            }
        }
    };
}

copy_view_key!(Prim<T>, T::Native, T: ArrowPrimitiveType);
copy_view_key!(Dec64, i64);
copy_view_key!(Dec128, i128);
copy_view_key!(Bool, bool);
copy_view_key!(Ts, Timestamp);

impl ViewKey for Utf8 {
    type Key = Box<[u8]>;
    type Probe = [u8];
    #[inline(always)]
    fn with_probe<T>(value: &[u8], f: impl FnOnce(&[u8]) -> T) -> T {
        f(value)
    }
    #[inline(always)]
    fn key(value: &[u8]) -> Box<[u8]> {
        Box::from(value)
    }
    fn value(key: &Box<[u8]>) -> Vec<u8> {
        key.to_vec()
    }
    fn key_heap(key: &Box<[u8]>) -> usize {
        key.len()
    }
}

/// One group's view: each value seen and its multiplicity (never 0),
/// hashed by the operator-wide [`view_hasher`] over the key's probe form.
type View<K> = HashTable<(<K as ViewKey>::Key, i64)>;

/// The views' hasher: foldhash (hashbrown's own, measured 26 % fewer
/// instructions per row than ahash here) with a fixed seed, so the order
/// of a snapshot's entries follows from the values' history alone.
fn view_hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0x5851_f42d_4c95_7f2d)
}

fn empty_view<K: ViewKey>() -> View<K> {
    HashTable::new()
}

/// Bytes a view holds: its table and its keys' heap payloads.
fn held_bytes<K: ViewKey>(view: &View<K>) -> usize {
    table_bytes::<K>(view) + view.iter().map(|(key, _)| K::key_heap(key)).sum::<usize>()
}

/// Row kind the inner state sees for a value leaving the set (-D).
const LEAVES: i8 = 3;

/// The inner template state `S` under a DISTINCT view over carrier `K`.
pub struct Distinct<S: TemplateState, K: ViewKey> {
    inner: S,
    views: Vec<View<K>>,
    hasher: foldhash::fast::FixedState,
    /// Bytes the views hold beyond `views` itself: table capacity and key
    /// payloads, kept up to date on insertion, removal and clearing.
    view_bytes: usize,
}

impl<S: TemplateState, K: ViewKey> Debug for Distinct<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Distinct")
            .field("inner", &self.inner)
            .field("groups", &self.views.len())
            .field("view_bytes", &self.view_bytes)
            .finish()
    }
}

impl<S: TemplateState, K: ViewKey> Default for Distinct<S, K> {
    fn default() -> Self {
        Distinct {
            inner: S::default(),
            views: Vec::new(),
            hasher: view_hasher(),
            view_bytes: 0,
        }
    }
}

/// Bytes of one table slot of a view (entry plus control byte).
fn slot_bytes<K: ViewKey>() -> usize {
    std::mem::size_of::<(K::Key, i64)>() + 1
}

fn table_bytes<K: ViewKey>(view: &View<K>) -> usize {
    view.capacity() * slot_bytes::<K>()
}

impl<S: TemplateState, K: ViewKey> Distinct<S, K> {
    /// Adds `delta` (not 0) to the count of `value` in group `g`'s view
    /// and returns the count before.
    #[inline(always)]
    fn bump(&mut self, g: usize, value: K::Ref<'_>, delta: i64) -> i64 {
        let hasher = &self.hasher;
        let view = &mut self.views[g];
        // Most rows repeat a value: one probe; a new value is inserted with
        // the same hash.
        let (hash, found) = K::with_probe(value, |probe| {
            let hash = hasher.hash_one(probe);
            let found = view.find_mut(hash, |(key, _)| key.borrow() == probe);
            (
                hash,
                found.map(|entry| {
                    let before = entry.1;
                    entry.1 += delta;
                    before
                }),
            )
        });
        if let Some(before) = found {
            if before + delta == 0 {
                self.remove(g, hash, value);
            }
            return before;
        }
        let capacity = view.capacity();
        let key = K::key(value);
        self.view_bytes += K::key_heap(&key);
        view.insert_unique(hash, (key, delta), |(key, _)| hasher.hash_one(key.borrow()));
        self.view_bytes += (view.capacity() - capacity) * slot_bytes::<K>();
        0
    }

    /// Removes `value`, whose count reached 0, from group `g`'s view.
    #[cold]
    fn remove(&mut self, g: usize, hash: u64, value: K::Ref<'_>) {
        let view = &mut self.views[g];
        K::with_probe(value, |probe| {
            if let Ok(entry) = view.find_entry(hash, |(key, _)| key.borrow() == probe) {
                let ((key, _), _) = entry.remove();
                self.view_bytes -= K::key_heap(&key);
            }
        });
    }

    /// Runs `batch` through the views: the rows that change a group's set
    /// of values, as a FILTER mask, and (retracting input) the row kinds
    /// the inner state sees, -D where a value leaves the set.
    fn view_rows<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<(BooleanArray, Option<Vec<i8>>)> {
        let (selected, values) = bind_argument::<K, RETRACTING>(spec, batch, self.views.len())?;
        let n = batch.len();
        let mut changes = BooleanBufferBuilder::new(n);
        changes.append_n(n, false);
        let mut inner_kinds = selected.kinds.map(|_| vec![0i8; n]);
        let ids = selected.groups.ids();
        selected.rows.for_each(|i| {
            let g = ids[i] as usize;
            let value = K::get(&values, i);
            match (selected.kinds, inner_kinds.as_mut()) {
                (Some(kinds), Some(inner)) if is_retract(kinds[i]) => {
                    if self.bump(g, value, -1) == 1 {
                        changes.set_bit(i, true);
                        inner[i] = LEAVES;
                    }
                }
                _ => {
                    if self.bump(g, value, 1) == 0 {
                        changes.set_bit(i, true);
                    }
                }
            }
        });
        Ok((BooleanArray::new(changes.finish(), None), inner_kinds))
    }

    /// Adds the counted entries of partial views (`views`, one list per
    /// partial row, rows in groups `ids`) to the groups' views: the entry
    /// rows that change a set, as a FILTER mask over the entries, each
    /// entry's group, and (retracting input) the kinds the inner state sees.
    fn merge_views<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        views: &ArrayRef,
        ids: &[u32],
    ) -> Result<ViewChanges> {
        let (offsets, key_column, counts) = read_counted_list(views, spec.name)?;
        if offsets.len() != ids.len() + 1 {
            return Err(AggError::Input(format!(
                "{}: {} partial views for {} rows",
                spec.name,
                offsets.len().saturating_sub(1),
                ids.len()
            )));
        }
        let keys = K::bind(key_column, spec.name)?;
        let nulls = key_column.nulls();
        let entries = key_column.len();
        let mut changes = BooleanBufferBuilder::new(entries);
        changes.append_n(entries, false);
        let mut groups = vec![0u32; entries];
        let mut kinds = RETRACTING.then(|| vec![0i8; entries]);
        for (row, &g) in ids.iter().enumerate() {
            for e in offsets[row] as usize..offsets[row + 1] as usize {
                let delta = counts.value(e);
                if delta == 0 || nulls.is_some_and(|n| n.is_null(e)) {
                    continue;
                }
                if !RETRACTING && delta < 0 {
                    return Err(AggError::Input(format!(
                        "{}: a partial view of an insert-only aggregate retracts a value",
                        spec.name
                    )));
                }
                groups[e] = g;
                let before = self.bump(g as usize, K::get(&keys, e), delta);
                let after = before + delta;
                if before <= 0 && after > 0 {
                    changes.set_bit(e, true);
                } else if before > 0 && after <= 0 {
                    changes.set_bit(e, true);
                    if let Some(kinds) = kinds.as_mut() {
                        kinds[e] = LEAVES;
                    }
                }
            }
        }
        Ok(ViewChanges {
            keys: key_column.clone(),
            groups,
            changes: BooleanArray::new(changes.finish(), None),
            kinds,
        })
    }

    /// The views of the listed groups as one `{key, count}` list per group.
    fn view_list(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        let mut keys = Vec::new();
        let mut counts = Vec::new();
        let mut lengths = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = crate::kernel::group_index(g, self.views.len(), spec.name)?;
            let view = &self.views[g];
            lengths.push(view.len());
            for (key, count) in view {
                keys.push(K::value(key));
                counts.push(*count);
            }
        }
        let arg_type = spec.arg_type()?;
        let entries = keys.len();
        let key_column = K::build(keys, vec![true; entries], arg_type)?;
        counted_list(arg_type, key_column, counts, lengths)
    }
}

/// What merging partial views does to the sets: per view entry its group,
/// whether it entered or left its group's set, and how (retracting input).
struct ViewChanges {
    keys: ArrayRef,
    groups: Vec<u32>,
    changes: BooleanArray,
    kinds: Option<Vec<i8>>,
}

/// The batch the inner state folds: the same columns, only the rows that
/// changed a set, with their kinds.
fn inner_batch<'a>(
    batch: &BatchUpdate<'a>,
    changes: &'a BooleanArray,
    kinds: Option<&'a [i8]>,
) -> BatchUpdate<'a> {
    BatchUpdate {
        args: batch.args,
        group_ids: batch.group_ids,
        filter: Some(changes),
        row_kinds: kinds,
    }
}

impl<S: TemplateState, K: ViewKey> TemplateState for Distinct<S, K>
where
    K::Owned: Send,
{
    fn len(&self) -> usize {
        self.views.len()
    }

    fn bytes_per_group() -> usize {
        S::bytes_per_group() + std::mem::size_of::<View<K>>()
    }

    /// A view entry per row, with room for the table doubling.
    fn bytes_per_input_row() -> usize {
        S::bytes_per_input_row() + 3 * slot_bytes::<K>()
    }

    fn state_types(spec: &AccSpec) -> Vec<DataType> {
        // The inner template's own state: its spec's partials end in the
        // view's list, which is not the inner state's.
        let mut inner = spec.clone();
        inner.partial_types.pop();
        let mut types = S::state_types(&inner);
        if let Some(arg_type) = &spec.arg_type {
            types.push(counted_list_type(arg_type));
        }
        types
    }

    fn resize(&mut self, n: usize) {
        self.inner.resize(n);
        for view in self.views.iter().skip(n) {
            self.view_bytes -= held_bytes::<K>(view);
        }
        self.views.resize_with(n, empty_view::<K>);
    }

    fn clear(&mut self, groups: &[u32]) {
        self.inner.clear(groups);
        for &g in groups {
            if let Some(view) = self.views.get_mut(g as usize) {
                self.view_bytes -= held_bytes::<K>(view);
                *view = empty_view::<K>();
            }
        }
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.views.clear();
        self.view_bytes = 0;
    }

    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
            + self.views.capacity() * std::mem::size_of::<View<K>>()
            + self.view_bytes
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let (changes, kinds) = self.view_rows::<RETRACTING>(spec, batch)?;
        let inner = inner_batch(batch, &changes, kinds.as_deref());
        self.inner.update::<RETRACTING>(spec, &inner)
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let (changes, kinds) = self.view_rows::<RETRACTING>(spec, batch)?;
        let inner = inner_batch(batch, &changes, kinds.as_deref());
        self.inner
            .update_traced::<RETRACTING>(spec, &inner, changed)
    }

    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        let Some(views) = partials.last() else {
            return Err(AggError::Input(format!(
                "{}: expected the inner partial columns and the DISTINCT views",
                spec.name
            )));
        };
        let merged = self.merge_views::<RETRACTING>(spec, views, groups.ids())?;
        let args = [merged.keys.clone()];
        let inner = BatchUpdate {
            args: &args,
            group_ids: &merged.groups,
            filter: Some(&merged.changes),
            row_kinds: merged.kinds.as_deref(),
        };
        self.inner.update::<RETRACTING>(spec, &inner)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        self.inner.evaluate(spec, groups)
    }

    /// The inner state's partial columns, then the views.
    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        let mut columns = self.inner.partials(spec, groups)?;
        columns.push(self.view_list(spec, groups)?);
        Ok(columns)
    }

    /// The inner state's snapshot columns, then the views.
    fn snapshot(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        let mut columns = self.inner.snapshot(spec, groups)?;
        columns.push(self.view_list(spec, groups)?);
        Ok(columns)
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        let Some((view_column, inner_state)) = state.split_last() else {
            return Err(AggError::Input(format!(
                "{}: expected the inner state columns and the DISTINCT views",
                spec.name
            )));
        };
        let (offsets, key_column, counts) = read_counted_list(view_column, spec.name)?;
        let keys = K::bind(key_column, spec.name)?;
        // Build every view first, so a bad column changes nothing.
        let mut restored = Vec::with_capacity(groups.len());
        for (i, &g) in groups.iter().enumerate() {
            let g = crate::kernel::group_index(g, self.views.len(), spec.name)?;
            let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
            let mut view = View::<K>::with_capacity(end - start);
            for e in start..end {
                let count = counts.value(e);
                if count == 0 {
                    return Err(AggError::Input(format!(
                        "{}: a DISTINCT view entry has count 0",
                        spec.name
                    )));
                }
                let key = K::key(K::get(&keys, e));
                let hasher = &self.hasher;
                let hash = hasher.hash_one(key.borrow());
                if view
                    .find(hash, |(other, _)| other.borrow() == key.borrow())
                    .is_some()
                {
                    return Err(AggError::Input(format!(
                        "{}: a DISTINCT view lists a value twice",
                        spec.name
                    )));
                }
                view.insert_unique(hash, (key, count), |(other, _)| {
                    hasher.hash_one(other.borrow())
                });
            }
            restored.push((g, view));
        }
        self.inner.restore(spec, inner_state, groups)?;
        for (g, view) in restored {
            let old = std::mem::replace(&mut self.views[g], view);
            self.view_bytes -= held_bytes::<K>(&old);
            self.view_bytes += held_bytes::<K>(&self.views[g]);
        }
        Ok(())
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        S::mark_changed(spec, before, after, changed)
    }
}
