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
//! skips them. The DISTINCT calls over one argument share one view, as the
//! calls of a Flink DistinctInfo share one MapView: each call is a column
//! of the view's cells (`distinct_view`), the operator links them
//! (`operator::shared_views`) and runs a batch through the view once for
//! all of them. Insert-only views hold a bit per call (a value's count
//! only matters as zero or not there), retracting ones a count per call. Spec entries with `distinct = true` run under this view when
//! their template declares `distinct_view = true`; the emitter wraps the
//! template's state: `Distinct<Slots<Sum<...>>, Prim<Int64Type>>`.
//!
//! Two phases: a call's partial is the inner template's partial columns and
//! then its column of the view as a list of `{key, count}` per group (the
//! snapshot's layout; count 1 for an insert-only bit); the operator joins the views of calls that share Flink's
//! DistinctInfo into Flink's one MapView column (`operator::views`). Merging
//! adds each entry's count to the group's view as Flink's distinct merge
//! does: a value enters the set when its count goes from <= 0 to > 0 and
//! leaves it when its count goes from > 0 to <= 0; the inner partial columns
//! are not read (Flink's global folds the values, not the local results).

use std::borrow::Borrow;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::ArrayRef;
use arrow_schema::DataType;

use super::distinct_view::{CellMode, ChangedEntries, SharedView, LEAVES};
use super::{prepared_argument, AccSpec, TemplateState};
use crate::accumulator::{BatchUpdate, DistinctRows, ViewHandle};
use crate::error::{AggError, Result};
use crate::kernel::multiset::{counted_list_type, read_counted_list};
use crate::kernel::{Binding, Bool, Dec128, Dec64, GroupIds, Prim, Rows, Timestamp, Ts, Utf8};
use crate::types::Phase;

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

/// The inner template state `S` under a DISTINCT view over carrier `K`.
/// The view may be shared with the other DISTINCT calls over the same
/// argument ([`SharedView`]); this call is its column `call`.
pub struct Distinct<S: TemplateState, K: ViewKey> {
    inner: S,
    view: Arc<Mutex<SharedView<K>>>,
    /// This call's column in the view.
    call: usize,
    /// Whether this call reports the view's memory (its column 0), so a
    /// shared view is counted once.
    owner: bool,
    mode: CellMode,
}

impl<S: TemplateState, K: ViewKey> Debug for Distinct<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Distinct")
            .field("inner", &self.inner)
            .field("call", &self.call)
            .field("mode", &self.mode)
            .finish()
    }
}

impl<S: TemplateState, K: ViewKey> Default for Distinct<S, K> {
    fn default() -> Self {
        Distinct {
            inner: S::default(),
            view: Arc::new(Mutex::new(SharedView::new(1, CellMode::Bits))),
            call: 0,
            owner: true,
            mode: CellMode::Bits,
        }
    }
}

impl<S: TemplateState, K: ViewKey> Distinct<S, K> {
    /// The view, locked (the operator runs on one thread: never contended;
    /// a poisoned lock still holds a consistent view, as every change to
    /// it completes before the lock is released).
    fn lock(&self) -> MutexGuard<'_, SharedView<K>> {
        self.view
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `columns` (the inner state's), then this call's column of the view
    /// for `groups` as a `{key, count}` list per group.
    fn with_view_list(
        &self,
        spec: &AccSpec,
        groups: &[u32],
        mut columns: Vec<ArrayRef>,
    ) -> Result<Vec<ArrayRef>> {
        columns.push(
            self.lock()
                .list(self.call, groups, spec.arg_type()?, spec.name)?,
        );
        Ok(columns)
    }

    /// Runs `batch` through this call's column of the view alone.
    fn fold_own<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<DistinctRows> {
        let (selected, column) = prepared_argument::<K, RETRACTING>(spec, batch, self.inner.len())?;
        let values = K::bind(&column, spec.name)?;
        let mut rows = self.lock().fold::<RETRACTING>(
            selected.groups.ids(),
            &values,
            selected.kinds,
            &[(self.call, &selected.rows)],
        )?;
        rows.pop()
            .ok_or_else(|| AggError::Input(format!("{}: the view pass lost its call", spec.name)))
    }

    /// The rows `batch` changes in this call's set: given by the shared
    /// view's pass, or folded here.
    fn changed_rows<'b, const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'b>,
        own: &'b mut Option<DistinctRows>,
    ) -> Result<&'b DistinctRows> {
        let rows = match batch.distinct {
            Some(rows) => rows,
            None => own.insert(self.fold_own::<RETRACTING>(spec, batch)?),
        };
        if rows.changes.len() != batch.len() {
            return Err(AggError::Input(format!(
                "{}: a view pass of {} rows for a batch of {}",
                spec.name,
                rows.changes.len(),
                batch.len()
            )));
        }
        Ok(rows)
    }
}

/// The batch the inner state folds: the same columns, only the rows that
/// changed a set, with their kinds.
fn inner_batch<'a>(batch: &BatchUpdate<'a>, rows: &'a DistinctRows) -> BatchUpdate<'a> {
    BatchUpdate {
        args: batch.args,
        group_ids: batch.group_ids,
        filter: Some(&rows.changes),
        row_kinds: rows.kinds.as_deref(),
        distinct: None,
    }
}

impl<S: TemplateState, K: ViewKey> TemplateState for Distinct<S, K>
where
    K::Owned: Send,
{
    fn configure_call(&mut self, phase: Phase, args: usize) {
        self.inner.configure_call(phase, args);
    }

    fn configure(&mut self, retracting: bool) {
        self.inner.configure(retracting);
        self.mode = if retracting {
            CellMode::Counts
        } else {
            CellMode::Bits
        };
        self.view = Arc::new(Mutex::new(SharedView::new(1, self.mode)));
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn bytes_per_group() -> usize {
        S::bytes_per_group() + SharedView::<K>::bytes_per_group()
    }

    fn bytes_per_input_row() -> usize {
        S::bytes_per_input_row() + SharedView::<K>::bytes_per_input_row()
    }

    fn state_types(&self, spec: &AccSpec) -> Vec<DataType> {
        // The inner template's own state: its spec's partials end in the
        // view's list, which is not the inner state's.
        let mut inner = spec.clone();
        inner.partial_types.pop();
        let mut types = self.inner.state_types(&inner);
        if let Some(arg_type) = &spec.arg_type {
            types.push(counted_list_type(arg_type));
        }
        types
    }

    fn resize(&mut self, n: usize) {
        self.inner.resize(n);
        self.lock().resize(n);
    }

    fn clear(&mut self, groups: &[u32]) {
        self.inner.clear(groups);
        self.lock().clear(groups);
    }

    fn clear_results(&mut self, groups: &[u32]) {
        self.inner.clear(groups);
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.lock().reset();
    }

    fn release_spare(&mut self) {
        self.inner.release_spare();
    }

    fn memory_bytes(&self) -> usize {
        let view = if self.owner {
            self.lock().memory_bytes()
        } else {
            0
        };
        self.inner.memory_bytes() + view
    }

    fn new_view(&self, calls: usize) -> Option<ViewHandle> {
        let view: ViewHandle = Arc::new(Mutex::new(SharedView::<K>::new(calls, self.mode)));
        Some(view)
    }

    fn join_view(&mut self, view: &ViewHandle, call: usize) -> bool {
        let Ok(view) = Arc::clone(view).downcast::<Mutex<SharedView<K>>>() else {
            return false;
        };
        // Only before any row: the view being left holds no value.
        let fits = self.lock().is_empty() && {
            let mut shared = view.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let fits = call < shared.calls() && shared.mode() == self.mode;
            if fits && shared.len() < self.inner.len() {
                shared.resize(self.inner.len());
            }
            fits
        };
        if fits {
            self.view = view;
            self.call = call;
            self.owner = call == 0;
        }
        fits
    }

    fn view_pass<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batches: &[BatchUpdate<'_>],
    ) -> Result<Vec<DistinctRows>> {
        let groups = self.inner.len();
        let Some(first) = batches.first() else {
            return Ok(Vec::new());
        };
        let (_, column) = prepared_argument::<K, RETRACTING>(spec, first, groups)?;
        let values = K::bind(&column, spec.name)?;
        let mut selected = Vec::with_capacity(batches.len());
        for batch in batches {
            let same = match (batch.args.first(), first.args.first()) {
                (Some(a), Some(b)) => {
                    a.to_data().ptr_eq(&b.to_data())
                        && std::ptr::eq(batch.group_ids, first.group_ids)
                }
                _ => false,
            };
            if !same {
                return Err(AggError::Input(format!(
                    "{}: calls sharing a DISTINCT view read different columns",
                    spec.name
                )));
            }
            selected.push(prepared_argument::<K, RETRACTING>(spec, batch, groups)?.0);
        }
        let calls: Vec<(usize, &Rows)> = selected.iter().map(|s| &s.rows).enumerate().collect();
        let mut view = self.lock();
        if view.calls() != batches.len() {
            return Err(AggError::Input(format!(
                "{}: a view of {} calls run for {}",
                spec.name,
                view.calls(),
                batches.len()
            )));
        }
        view.fold::<RETRACTING>(first.group_ids, &values, selected[0].kinds, &calls)
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let mut own = None;
        let rows = self.changed_rows::<RETRACTING>(spec, batch, &mut own)?;
        self.inner
            .update::<RETRACTING>(spec, &inner_batch(batch, rows))
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let mut own = None;
        let rows = self.changed_rows::<RETRACTING>(spec, batch, &mut own)?;
        self.inner
            .update_traced::<RETRACTING>(spec, &inner_batch(batch, rows), changed)
    }

    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        let ids = groups.ids();
        let (_, offsets, key_column, counts) = split_views(spec, partials, ids.len(), "partial")?;
        let keys_column = K::prepare(key_column)?;
        let keys = K::bind(&keys_column, spec.name)?;
        let merged = self.lock().merge_call(
            self.call,
            (ids, offsets),
            (&keys, key_column),
            counts,
            spec.name,
        )?;
        let kinds: Option<Vec<i8>> = RETRACTING.then(|| {
            merged
                .leaves
                .iter()
                .map(|&leaves| if leaves { LEAVES } else { 0 })
                .collect()
        });
        let args = [key_column.clone()];
        let inner = BatchUpdate {
            args: &args,
            group_ids: &merged.groups,
            filter: Some(&merged.changes),
            row_kinds: kinds.as_deref(),
            distinct: None,
        };
        self.inner.update::<RETRACTING>(spec, &inner)
    }

    /// The inner aggregate's partial columns merged into the fresh groups
    /// as they are, the view's list set as it is: folding the view's
    /// values again would change order-sensitive results (LISTAGG) and
    /// the rounding of floating-point sums.
    fn load<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        let ids = groups.ids();
        let (inner, offsets, key_column, counts) =
            split_views(spec, partials, ids.len(), "loaded")?;
        let keys_column = K::prepare(key_column)?;
        let keys = K::bind(&keys_column, spec.name)?;
        // Check every list first, so a bad column changes nothing.
        self.lock()
            .check_lists(ids, offsets, &keys, counts, spec.name)?;
        self.inner.merge::<RETRACTING>(spec, inner, groups)?;
        self.lock()
            .restore_call(self.call, ids, offsets, &keys, counts, true);
        Ok(())
    }

    fn start_view_log(&mut self) {
        self.lock().start_log();
    }

    fn clear_view_log(&mut self) {
        self.lock().clear_log();
    }

    /// The whole view's changed entries (every call's counts): a shared
    /// view answers the same through each of its calls.
    fn view_changes(&self, spec: &AccSpec, groups: &[u32]) -> Result<Option<ChangedEntries>> {
        self.lock().changed_entries(groups, spec.arg_type()?)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        self.inner.evaluate(spec, groups)
    }

    /// The inner state's partial columns, then the view.
    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.with_view_list(spec, groups, self.inner.partials(spec, groups)?)
    }

    /// The inner state's partial columns alone.
    fn result_partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.inner.partials(spec, groups)
    }

    /// The inner state's snapshot columns, then the view.
    fn snapshot(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.with_view_list(spec, groups, self.inner.snapshot(spec, groups)?)
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        let (inner_state, offsets, key_column, counts) =
            split_views(spec, state, groups.len(), "snapshot")?;
        let keys_column = K::prepare(key_column)?;
        let keys = K::bind(&keys_column, spec.name)?;
        // Check every list first, so a bad column changes nothing.
        self.lock()
            .check_lists(groups, offsets, &keys, counts, spec.name)?;
        self.inner.restore(spec, inner_state, groups)?;
        self.lock()
            .restore_call(self.call, groups, offsets, &keys, counts, false);
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

/// A DISTINCT call's columns (`what`: partial, loaded or snapshot) split
/// into the inner aggregate's and its view list, read for `rows` rows:
/// `(inner, offsets, values, counts)`.
fn split_views<'a>(
    spec: &AccSpec,
    columns: &'a [ArrayRef],
    rows: usize,
    what: &str,
) -> Result<(
    &'a [ArrayRef],
    &'a [i32],
    &'a ArrayRef,
    &'a arrow_array::Int64Array,
)> {
    let Some((views, inner)) = columns.split_last() else {
        return Err(AggError::Input(format!(
            "{}: expected the inner {what} columns and the DISTINCT views",
            spec.name
        )));
    };
    let (offsets, key_column, counts) = read_counted_list(views, spec.name)?;
    if offsets.len() != rows + 1 {
        return Err(AggError::Input(format!(
            "{}: {} {what} views for {rows} rows",
            spec.name,
            offsets.len().saturating_sub(1),
        )));
    }
    Ok((inner, offsets, key_column, counts))
}
