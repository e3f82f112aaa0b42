//! State in Flink's own layout: a group aggregate whose accumulators are
//! exactly the fields of Flink's `accState` (its `ValueState<RowData>` of
//! the accumulator row) keeps that state in the job's keyed state backend,
//! written by the Java operator. The native groups are then a write-back
//! copy: every group written since the last write-back is marked, and
//! [`GroupAggOperator::state_changes`] hands the marked groups over as one
//! batch per checkpoint, in Flink's accumulator layout (the partial
//! columns), each row an upsert (`+I`) or, for a group whose state is gone,
//! a delete (`-D`). [`GroupAggOperator::load_state`] takes accumulator rows
//! read from the backend (a restore) as state, unmarked.
//!
//! A change batch: the key columns, every accumulator's partial columns
//! (the plan's calls, then the inserted record counter, as Flink orders
//! its accumulators), with a state TTL the Int64 [`WRITTEN_COLUMN`] (when
//! the group's state was last written, ms: Flink's TTL timestamp), then
//! the Int8 `$row_kind`.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, Int8Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::concat::concat_batches;

use super::flink_views::FlinkViews;
use super::written_keys::WrittenKeys;
use super::GroupAggOperator;
use crate::error::{AggError, Result};
use crate::plan::arrow_type;
use crate::types::{Phase, SqlType, ROW_KIND_COLUMN};

/// With a state TTL, the change batch column of each group's last write
/// time (ms), which Flink's TTL state keeps beside the value.
pub const WRITTEN_COLUMN: &str = "$written";

/// `$row_kind` of a group whose state is written (Flink's +I).
const UPSERT: i8 = 0;
/// `$row_kind` of a group whose state is cleared (Flink's -D).
const DELETE: i8 = 3;
/// The most the filter of groups written to the backend may take.
const MAX_FILTER_BYTES: usize = 256 << 20;

/// A field of Flink's accumulator row (its `accTypes`), as the operator
/// binding its state names it.
#[derive(Debug, Clone)]
pub enum FlinkField {
    /// A field of this type.
    Type(SqlType),
    /// A structured accumulator whose data views Flink keeps as map states
    /// beside `accState` (MIN/MAX over retractions: `agg<i>$map`); the
    /// call's partial is the same struct, its maps written to those states.
    StateViews,
}

/// The write-back bookkeeping of an operator bound to Flink's layout.
#[derive(Debug)]
pub(super) struct FlinkState {
    /// Schema of the change batches.
    schema: SchemaRef,
    /// By group id: whether its state changed since the last write-back.
    dirty: Vec<bool>,
    /// By group id: how often its state changed since it was cached (or,
    /// halved, since the last eviction kept it), saturating: the groups an
    /// eviction keeps (`cache.rs`).
    pub(super) touches: Vec<u8>,
    /// Keys (as change rows, `-D`) of cleared groups that a table rebuild
    /// dropped before their delete was written back.
    dropped: Vec<RecordBatch>,
    /// A batch [`GroupAggOperator::probe`] holds until its uncached groups
    /// are loaded (`cache.rs`).
    pub(super) pending: Option<RecordBatch>,
    /// Times the cache was emptied into the state backend.
    pub(super) evictions: u64,
    /// What the operator knows of the groups in the backend.
    pub(super) backend: BackendKeys,
    /// Whether change batches carry [`WRITTEN_COLUMN`] (a state TTL).
    ttl: bool,
    /// How many of the operator's accumulators are Flink's accumulators
    /// (all, or none for a GROUP BY without calls: Flink keeps an empty
    /// row, the runtime a hidden COUNT(*)).
    stored: usize,
    /// The DISTINCT views (Flink's `distinctAcc_<i>` map states), whose
    /// columns follow the calls' own accumulator columns.
    pub(super) views: FlinkViews,
}

/// What an operator bound to Flink's layout knows of the groups its state
/// backend holds, which decides the groups a batch reads (`cache.rs`).
#[derive(Debug)]
pub(super) enum BackendKeys {
    /// Every group the backend holds is cached: nothing was restored and
    /// the cache was never emptied.
    AllCached,
    /// Groups not cached are in the backend only if the filter holds them.
    Written(WrittenKeys),
    /// The backend may hold any group (a restore, or a filter that filled
    /// up): every uncached group is read.
    Unknown,
}

impl BackendKeys {
    /// Whether an uncached group with Flink hash `hash` may be in the
    /// backend.
    pub(super) fn may_hold(&self, hash: i32) -> bool {
        match self {
            BackendKeys::AllCached => false,
            BackendKeys::Written(keys) => keys.may_contain(hash),
            BackendKeys::Unknown => true,
        }
    }
}

impl FlinkState {
    /// Marks the listed groups changed.
    fn mark(&mut self, groups: &[u32]) {
        for &g in groups {
            let g = g as usize;
            if g >= self.dirty.len() {
                self.dirty.resize(g + 1, false);
            }
            if g >= self.touches.len() {
                self.touches.resize(g + 1, 0);
            }
            self.dirty[g] = true;
            self.touches[g] = self.touches[g].saturating_add(1);
        }
    }

    /// After an eviction wrote every change back: forgets every group.
    pub(super) fn emptied(&mut self) {
        self.dirty = Vec::new();
        self.touches = Vec::new();
        self.dropped.clear();
    }

    /// Forgets every change: they were written to the state backend.
    pub(super) fn written(&mut self) {
        self.dirty.iter_mut().for_each(|d| *d = false);
        self.dropped.clear();
    }

    /// The schema of a batch of keys: a change batch's key columns and its
    /// `$row_kind`.
    pub(super) fn key_schema(&self, keys: usize) -> SchemaRef {
        let fields = self.schema.fields();
        let mut kept = fields[..keys].to_vec();
        kept.push(fields[fields.len() - 1].clone());
        Arc::new(Schema::new(kept))
    }

    /// Bytes the bookkeeping holds.
    pub(super) fn memory_bytes(&self) -> usize {
        let filter = match &self.backend {
            BackendKeys::Written(keys) => keys.memory_bytes(),
            _ => 0,
        };
        filter
            + self.dirty.capacity()
            + self.touches.capacity()
            + self
                .pending
                .as_ref()
                .map_or(0, RecordBatch::get_array_memory_size)
            + self
                .dropped
                .iter()
                .map(RecordBatch::get_array_memory_size)
                .sum::<usize>()
    }
}

impl GroupAggOperator {
    /// Binds the operator's state to Flink's accumulator layout
    /// `acc_types` (Flink's `accTypes` of the operator it stands for, no
    /// DISTINCT view). See
    /// [`bind_flink_state_with_views`](Self::bind_flink_state_with_views).
    pub fn bind_flink_state(&mut self, acc_types: &[SqlType]) -> Result<()> {
        let fields: Vec<FlinkField> = acc_types.iter().cloned().map(FlinkField::Type).collect();
        self.bind_flink_state_with_views(&fields, 0)
    }

    /// Binds the operator's state to Flink's accumulator layout: the
    /// accumulator fields `acc_types` (Flink's `accTypes` of the operator
    /// it stands for, but its DISTINCT views), then `views` DISTINCT views
    /// (Flink's DistinctInfos, kept as map states). The accumulators must
    /// hold exactly those fields and views; otherwise nothing changes and
    /// the error says which differ. Bind before the first batch.
    pub fn bind_flink_state_with_views(
        &mut self,
        acc_types: &[FlinkField],
        views: usize,
    ) -> Result<()> {
        let refuse = |why: String| Err(AggError::Plan(format!("Flink's state layout: {why}")));
        if !matches!(self.plan.phase, Phase::Single | Phase::Global) {
            return refuse(format!(
                "the {} phase keeps no state",
                self.plan.phase.as_str()
            ));
        }
        if self.finals.is_some() {
            return refuse(
                "the incremental aggregate of a split-distinct plan is not yet written".into(),
            );
        }
        let flink_views = match FlinkViews::of(self) {
            Ok(v) => v,
            Err(why) => return refuse(why),
        };
        let keeps_views = self.accs.iter().any(|a| a.keeps_state_views());
        if (flink_views.len() > 0 || keeps_views) && self.ttl_ms().is_some() {
            return refuse(
                "data views with a state TTL (Flink keeps a TTL per map entry) are not yet written"
                    .into(),
            );
        }
        if flink_views.len() != views {
            return refuse(format!(
                "the calls form {} DISTINCT views, Flink's operator keeps {views}",
                flink_views.len()
            ));
        }
        if !self.table.is_empty() {
            return refuse("the operator already holds groups".into());
        }
        // A GROUP BY without calls: Flink's accumulator row is empty; the
        // runtime's hidden COUNT(*) only marks the group as seen.
        let stored = if self.plan.calls.is_empty() && acc_types.is_empty() {
            0
        } else {
            self.accs.len()
        };
        let mut ours = flink_views.column_types(self, stored);
        let view_types = ours.split_off(ours.len() - views);
        let owners = flink_views.column_owners(self, stored);
        let same = ours.len() == acc_types.len()
            && ours
                .iter()
                .zip(acc_types)
                .zip(&owners)
                .all(|((a, b), &c)| match b {
                    FlinkField::Type(t) => a.equals_datatype(&arrow_type(t)),
                    FlinkField::StateViews => {
                        matches!(a, DataType::Struct(_)) && self.accs[c].keeps_state_views()
                    }
                });
        if !same {
            return refuse(format!(
                "the accumulators hold {ours:?}, Flink's accState holds {acc_types:?} ({})",
                self.specializations.join(", ")
            ));
        }
        let mut fields: Vec<Field> = self
            .key_arrow
            .iter()
            .enumerate()
            .map(|(i, t)| Field::new(format!("key{i}"), t.clone(), true))
            .collect();
        fields.extend(
            ours.into_iter()
                .enumerate()
                .map(|(i, t)| Field::new(format!("acc{i}"), t, true)),
        );
        fields.extend(
            view_types
                .into_iter()
                .enumerate()
                .map(|(v, t)| Field::new(format!("view{v}"), t, true)),
        );
        let ttl = self.ttl_ms().is_some();
        if ttl {
            fields.push(Field::new(WRITTEN_COLUMN, DataType::Int64, false));
        }
        fields.push(Field::new(ROW_KIND_COLUMN, DataType::Int8, false));
        self.flink_state = Some(FlinkState {
            schema: Arc::new(Schema::new(fields)),
            dirty: Vec::new(),
            touches: Vec::new(),
            dropped: Vec::new(),
            pending: None,
            evictions: 0,
            backend: BackendKeys::AllCached,
            ttl,
            stored,
            views: flink_views.clone(),
        });
        flink_views.start_logs(self);
        Ok(())
    }

    /// Whether the state is bound to Flink's layout.
    pub fn has_flink_state(&self) -> bool {
        self.flink_state.is_some()
    }

    /// Marks the listed groups' state changed (state bound to Flink's
    /// layout); every state write and clear comes through here.
    pub(super) fn mark_changed(&mut self, groups: &[u32]) {
        if let Some(state) = &mut self.flink_state {
            state.mark(groups);
        }
    }

    /// The groups whose state changed since the last
    /// [`state_changes_written`](Self::state_changes_written), as one
    /// change batch (see the module comment), or `None` when none did.
    /// Changes nothing: a write-back that fails leaves them marked. Flush
    /// first: an open bundle is an error.
    pub fn state_changes(&self) -> Result<Option<RecordBatch>> {
        self.check_not_failed()?;
        let Some(state) = &self.flink_state else {
            return Err(AggError::Snapshot(
                "the state is not bound to Flink's layout".into(),
            ));
        };
        if self.has_open_bundle() {
            return Err(AggError::Snapshot(
                "the bundle is open; flush before writing state back".into(),
            ));
        }
        let groups: Vec<u32> = (0..state.dirty.len().min(self.table.len()) as u32)
            .filter(|&g| state.dirty[g as usize])
            .collect();
        if groups.is_empty() && state.dropped.is_empty() {
            return Ok(None);
        }
        let kinds: Int8Array = groups
            .iter()
            .map(|&g| {
                Some(if self.live.is_live(g as usize) {
                    UPSERT
                } else {
                    DELETE
                })
            })
            .collect();
        let changed = self.state_rows(state, &groups, kinds, false)?;
        if state.dropped.is_empty() {
            return Ok(Some(changed));
        }
        let mut all = state.dropped.clone();
        all.push(changed);
        Ok(Some(concat_batches(&state.schema, &all)?))
    }

    /// The listed groups as rows of a change batch with the given kinds:
    /// with `whole` DISTINCT views hold whole maps (to load again), else
    /// the entries changed since the last write-back (to write back).
    pub(super) fn state_rows(
        &self,
        state: &FlinkState,
        groups: &[u32],
        kinds: Int8Array,
        whole: bool,
    ) -> Result<RecordBatch> {
        let mut columns = self.table.keys(groups)?;
        columns.extend(state.views.columns(self, state.stored, groups, whole)?);
        if state.ttl {
            columns.push(self.write_times(groups));
        }
        columns.push(Arc::new(kinds));
        Ok(RecordBatch::try_new(state.schema.clone(), columns)?)
    }

    /// Forgets the changes [`state_changes`](Self::state_changes) returned:
    /// the caller has written them to the state backend.
    pub fn state_changes_written(&mut self) {
        self.note_written(false);
        if let Some(state) = &mut self.flink_state {
            state.written();
        }
        if let Some(views) = self.flink_state.as_ref().map(|s| s.views.clone()) {
            views.clear_logs(self);
        }
    }

    /// The state backend holds groups this operator did not write (Flink
    /// restored them): every group a batch needs that is not cached must
    /// be read.
    pub fn backend_restored(&mut self) {
        if let Some(state) = &mut self.flink_state {
            state.backend = BackendKeys::Unknown;
        }
    }

    /// Before the changed groups' marks are cleared: records the live
    /// ones, which the caller wrote to the backend, as possibly there; on
    /// `emptying` the cache, every live group (all groups the backend can
    /// hold, when nothing was restored), starting the filter.
    pub(super) fn note_written(&mut self, emptying: bool) {
        let Some(state) = &mut self.flink_state else {
            return;
        };
        let hashes = self.table.key_hashes();
        let groups = hashes.len();
        let keys = match &mut state.backend {
            BackendKeys::Unknown => return,
            BackendKeys::AllCached if !emptying => return,
            BackendKeys::AllCached => {
                let bytes = (self.budget.limit() / 8).min(MAX_FILTER_BYTES);
                let mut keys = WrittenKeys::with_bytes(bytes);
                for g in (0..groups).filter(|&g| self.live.is_live(g)) {
                    keys.insert(hashes[g]);
                }
                state.backend = BackendKeys::Written(keys);
                return;
            }
            BackendKeys::Written(keys) => keys,
        };
        let dirty = &state.dirty;
        for g in (0..groups.min(dirty.len())).filter(|&g| dirty[g] && self.live.is_live(g)) {
            keys.insert(hashes[g]);
        }
        if keys.saturated() {
            state.backend = BackendKeys::Unknown;
        }
    }

    /// Takes accumulator rows read from Flink's state backend as the
    /// state of their groups: the key columns, the accumulator columns and,
    /// with a state TTL, [`WRITTEN_COLUMN`] (each group's write time), as
    /// in a change batch (a trailing `$row_kind` is ignored). Every key
    /// must be new to the operator. On any error nothing is loaded.
    pub fn load_state(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_not_failed()?;
        let Some(state) = &self.flink_state else {
            return Err(AggError::Snapshot(
                "the state is not bound to Flink's layout".into(),
            ));
        };
        // An open bundle is fine: the groups loaded are new to the operator,
        // so none of them is in the bundle.
        let expected = &state.schema.fields()[..state.schema.fields().len() - 1];
        let columns = batch.columns();
        let matches = columns.len() >= expected.len()
            && columns
                .iter()
                .zip(expected)
                .all(|(c, f)| c.data_type().equals_datatype(f.data_type()));
        if !matches {
            return Err(AggError::Snapshot(format!(
                "state rows hold columns {:?}, this operator's accState needs {:?}",
                columns.iter().map(|c| c.data_type()).collect::<Vec<_>>(),
                expected.iter().map(|f| f.data_type()).collect::<Vec<_>>()
            )));
        }
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let nkeys = self.key_arrow.len();
        let before = self.table.len();
        let table_bytes = self.table.memory_bytes();
        let mut ids = Vec::with_capacity(rows);
        self.table.intern(&columns[..nkeys], rows, &mut ids)?;
        let fresh = ids
            .iter()
            .enumerate()
            .all(|(i, &g)| g as usize == before + i);
        if !fresh {
            self.table.truncate(before);
            return Err(AggError::Snapshot(
                "state rows hold a key twice, or a key the operator already holds".into(),
            ));
        }
        let acc_end = expected.len() - usize::from(state.ttl);
        let stored = state.stored;
        let written = state.ttl.then(|| columns[acc_end].clone());
        let state_columns: Vec<ArrayRef> = columns[nkeys..acc_end].to_vec();
        let by_call = match state.views.partials_by_call(self, stored, &state_columns) {
            Ok(by_call) => by_call,
            Err(e) => {
                self.table.truncate(before);
                return Err(e);
            }
        };
        let table_growth = self.table.memory_bytes().saturating_sub(table_bytes);
        let bytes = table_growth + self.growth_bound(rows, 0, std::slice::from_ref(&state_columns));
        if let Err(e) = self.reserve(bytes, table_growth) {
            self.table.truncate(before);
            return Err(e);
        }
        self.grow_groups();
        for (acc, partials) in self.accs.iter_mut().zip(&by_call) {
            acc.load(partials, &ids)?;
        }
        for &g in &ids {
            self.live.set(g as usize);
        }
        match written
            .as_ref()
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
        {
            Some(times) => self.record_write_at(&ids, times.values()),
            None => self.record_write(&ids),
        }
        Ok(())
    }

    /// The listed groups' last write times (ms) as a change batch column.
    fn write_times(&self, groups: &[u32]) -> ArrayRef {
        let written = &self.retention.written;
        let now = self.retention.now_ms;
        Arc::new(Int64Array::from_iter_values(
            groups
                .iter()
                .map(|&g| written.get(g as usize).copied().unwrap_or(now)),
        ))
    }

    /// Before a table rebuild: keeps the keys of cleared groups whose
    /// delete is not written back yet, which the rebuild drops.
    pub(super) fn keep_dropped_deletes(&mut self) -> Result<()> {
        let Some(state) = &self.flink_state else {
            return Ok(());
        };
        let gone: Vec<u32> = (0..state.dirty.len().min(self.table.len()) as u32)
            .filter(|&g| state.dirty[g as usize] && !self.live.is_live(g as usize))
            .collect();
        if gone.is_empty() {
            return Ok(());
        }
        let batch = self.state_rows(
            state,
            &gone,
            Int8Array::from(vec![DELETE; gone.len()]),
            false,
        )?;
        if let Some(state) = &mut self.flink_state {
            state.dropped.push(batch);
        }
        Ok(())
    }

    /// After a table rebuild into `fresh`: moves the bookkeeping over,
    /// with each live group's mark under its new id (`order[new]` is the
    /// group's old id).
    pub(super) fn move_flink_state(&mut self, fresh: &mut GroupAggOperator, order: &[u32]) {
        let Some(mut state) = self.flink_state.take() else {
            return;
        };
        let dirty: Vec<bool> = order
            .iter()
            .map(|&old| state.dirty.get(old as usize).copied().unwrap_or(false))
            .collect();
        state.dirty = dirty;
        state.touches = order
            .iter()
            .map(|&old| state.touches.get(old as usize).copied().unwrap_or(0))
            .collect();
        let views = state.views.clone();
        fresh.flink_state = Some(state);
        views.start_logs(fresh);
    }
}
