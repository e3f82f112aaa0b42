//! Native memory as a cache over Flink's state backend, for an operator
//! bound to Flink's layout (`flink_state.rs`): the backend holds every
//! group, the operator the groups it was given or built since it was last
//! emptied. The caller (the Flink operator) drives it:
//!
//! - before a batch, [`GroupAggOperator::probe`] keeps the batch and names
//!   the groups it touches that the operator does not hold, which the
//!   caller reads from the backend and hands over with
//!   [`GroupAggOperator::load_state`]; [`GroupAggOperator::process_pending`]
//!   then folds the batch. A group the operator holds, live or not, is
//!   authoritative: the backend never knows more about it. Groups the
//!   backend cannot hold (never written, nothing restored: the filter of
//!   `written_keys.rs`) are not named, so they cost no backend read.
//! - after a batch (or a flushed bundle), when
//!   [`GroupAggOperator::should_evict`] says the budget is nearly used,
//!   [`GroupAggOperator::evict_all`] returns every changed group for the
//!   backend and empties the operator, so the budget bounds the cache
//!   instead of the state.

use std::sync::Arc;

use arrow_array::{Int8Array, RecordBatch, UInt32Array};
use arrow_select::take::take;

use super::flink_state::FlinkState;
use super::GroupAggOperator;
use crate::error::{AggError, Result};
use crate::memory::MemoryBudget;

impl GroupAggOperator {
    /// Keeps `batch` for [`process_pending`](Self::process_pending) and
    /// returns the keys (one row each: the change batch's key columns and
    /// `$row_kind`, all `+I`) of the groups it touches that the operator
    /// does not hold, or `None` when it holds them all. Changes no state.
    pub fn probe(&mut self, batch: RecordBatch) -> Result<Option<RecordBatch>> {
        self.check_not_failed()?;
        let Some(state) = &self.flink_state else {
            return Err(AggError::Plan(
                "probing the cache needs state bound to Flink's layout".into(),
            ));
        };
        let key_schema = state.key_schema(self.key_arrow.len());
        let read = self.read_input(&batch)?;
        let keys = read.keys;
        let rows = read.num_rows;
        let before = self.table.len();
        let mut ids = Vec::with_capacity(rows);
        self.table.intern(&keys, rows, &mut ids)?;
        // New ids are numbered in first-seen order: their first rows. Of
        // those, only groups the backend may hold are read.
        let hashes = &self.table.key_hashes()[before..];
        let backend = &self.flink_state.as_ref().expect("bound").backend;
        let mut new_groups = 0;
        let mut first_rows = Vec::new();
        for (row, &g) in ids.iter().enumerate() {
            if g as usize == before + new_groups {
                if backend.may_hold(hashes[new_groups]) {
                    first_rows.push(row as u32);
                }
                new_groups += 1;
            }
        }
        self.table.truncate(before);
        self.flink_state.as_mut().expect("bound").pending = Some(batch);
        if first_rows.is_empty() {
            return Ok(None);
        }
        let missing = first_rows.len();
        let at = UInt32Array::from(first_rows);
        let mut columns = keys
            .iter()
            .map(|c| take(c.as_ref(), &at, None))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        columns.push(Arc::new(Int8Array::from(vec![0i8; missing])));
        Ok(Some(RecordBatch::try_new(key_schema, columns)?))
    }

    /// Folds the batch [`probe`](Self::probe) kept, as
    /// [`process`](Self::process) would.
    pub fn process_pending(&mut self) -> Result<Option<RecordBatch>> {
        let pending = self.flink_state.as_mut().and_then(|s| s.pending.take());
        let Some(batch) = pending else {
            return Err(AggError::Plan("no probed batch is pending".into()));
        };
        self.process(&batch)
    }

    /// Whether the operator should be emptied into the state backend
    /// before the next batch: state bound to Flink's layout, no bundle
    /// open, and less budget left than a quarter of it (or than two
    /// batches of `batch_rows` new groups need, if more).
    pub fn should_evict(&self, batch_rows: usize) -> bool {
        if self.flink_state.is_none() || self.has_open_bundle() || self.table.is_empty() {
            return false;
        }
        let limit = self.budget.limit();
        let headroom = (limit / 4).max(2 * self.min_budget_bytes(batch_rows));
        self.budget.used().saturating_add(headroom) > limit
    }

    /// Empties the operator of its cold groups: returns the change batch
    /// of every group changed since the last write-back (as
    /// [`state_changes`](Self::state_changes)), which the caller must
    /// write to the state backend, and drops all groups but the hot ones
    /// (see [`hot_groups`](Self::hot_groups)), so that later batches read
    /// them from the backend again. No bundle may be open.
    pub fn evict_all(&mut self) -> Result<Option<RecordBatch>> {
        let changes = self.state_changes()?;
        self.note_written(true);
        let (hot, touches) = self.hot_groups();
        let kept = match &self.flink_state {
            Some(state) if !hot.is_empty() => {
                Some(self.state_rows(state, &hot, Int8Array::from(vec![0i8; hot.len()]), true)?)
            }
            _ => None,
        };
        let Some(mut state) = self.flink_state.take() else {
            return Err(AggError::Plan(
                "evicting needs state bound to Flink's layout".into(),
            ));
        };
        state.emptied();
        state.pending = None;
        state.evictions += 1;
        self.replace_with_empty(state)?;
        if let Some(rows) = kept {
            // Unchanged since written, so not marked; half their count
            // carries over, so that groups hot long ago cool down.
            match self.load_state(&rows) {
                Ok(()) => {
                    if let Some(state) = &mut self.flink_state {
                        state.touches = touches.iter().map(|t| t / 2).collect();
                    }
                }
                // Every kept group is in the backend (the changes above
                // are written before the next batch), so dropping them
                // loses nothing: batches read them back.
                Err(_) => {
                    let mut state = self.flink_state.take().expect("bound");
                    state.emptied();
                    self.replace_with_empty(state)?;
                }
            }
        }
        Ok(changes)
    }

    /// Replaces the operator by an empty one of the same plan that keeps
    /// `state` (the write-back bookkeeping), the clock and the arrival
    /// order.
    fn replace_with_empty(&mut self, state: FlinkState) -> Result<()> {
        let mut fresh = GroupAggOperator::new(self.plan.clone())?;
        fresh.retention.now_ms = self.retention.now_ms;
        fresh.retention.swept_ms = self.retention.swept_ms;
        fresh.retention.compaction_skipped = self.retention.compaction_skipped;
        std::mem::swap(&mut fresh.order, &mut self.order);
        fresh.flink_state = Some(state);
        fresh.budget = MemoryBudget::new(self.plan.memory_budget_bytes);
        *self = fresh;
        if let Some(views) = self.flink_state.as_ref().map(|s| s.views.clone()) {
            views.start_logs(self);
        }
        let used = self.measure();
        self.budget.set_used(used);
        Ok(())
    }

    /// The groups an eviction keeps, with their touch counts: the most
    /// often changed live groups, at most half of them, and only those
    /// changed more than once since they were cached (a stream of keys seen
    /// once keeps none).
    fn hot_groups(&self) -> (Vec<u32>, Vec<u8>) {
        let Some(state) = &self.flink_state else {
            return (Vec::new(), Vec::new());
        };
        let live = |g: usize| self.live.is_live(g);
        let mut by_count = [0usize; 256];
        for (g, &t) in state.touches.iter().enumerate() {
            if live(g) {
                by_count[t as usize] += 1;
            }
        }
        let most = self.num_groups() / 2;
        let mut kept = 0;
        let mut threshold = 256;
        while threshold > 2 && kept + by_count[threshold - 1] <= most {
            threshold -= 1;
            kept += by_count[threshold];
        }
        state
            .touches
            .iter()
            .enumerate()
            .filter(|&(g, &t)| t as usize >= threshold && live(g))
            .map(|(g, &t)| (g as u32, t))
            .unzip()
    }

    /// Times [`evict_all`](Self::evict_all) emptied the operator.
    pub fn evictions(&self) -> u64 {
        self.flink_state.as_ref().map_or(0, |s| s.evictions)
    }
}
