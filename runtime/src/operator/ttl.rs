//! Idle state retention: Flink's state TTL for group aggregates
//! (processing time, `OnCreateAndWrite`, `NeverReturnExpired`). A group's
//! state expires `state_ttl_ms` after it was last written; expired state
//! reads as absent (the next row is a first row, a retraction is dropped).
//! Expired groups are cleared when read, by a sweep every half TTL, and
//! the table is rebuilt without them once they outnumber the live ones, so
//! memory follows the live state (a rebuild that does not fit the budget
//! beside the current state is skipped).
//!
//! Time comes from the caller ([`GroupAggOperator::set_time`], the Flink
//! operator's processing time at each batch hand-over and bundle flush),
//! so expiry is decided per batch, not per row. Write times are not part of
//! aggforge's snapshots (restored state counts as written at restore); in
//! Flink's layout they travel with the state (`flink_state.rs`).

use super::GroupAggOperator;
use crate::error::Result;
use crate::flink_key::key_group_for_hash;
use crate::types::Phase;

/// Write times and the clock of an operator with a state TTL.
#[derive(Debug, Default)]
pub(super) struct Retention {
    /// Processing time in milliseconds, as last set.
    pub now_ms: i64,
    /// By group id: when its state was last written.
    pub written: Vec<i64>,
    /// When the last sweep ran.
    pub swept_ms: i64,
    /// Rebuilds skipped because they did not fit the budget.
    pub compaction_skipped: u64,
}

/// Fewest expired groups worth rebuilding the table for.
const MIN_COMPACTION: usize = 4096;

impl GroupAggOperator {
    pub(super) fn ttl_ms(&self) -> Option<i64> {
        (self.plan.state_ttl_ms > 0 && self.plan.phase != Phase::Local)
            .then(|| i64::try_from(self.plan.state_ttl_ms).unwrap_or(i64::MAX))
    }

    /// Sets the processing time (ms) that state expiry is judged by, and
    /// every half TTL sweeps expired groups (see the module comment).
    pub fn set_time(&mut self, now_ms: i64) -> Result<()> {
        self.retention.now_ms = now_ms;
        let Some(ttl) = self.ttl_ms() else {
            return Ok(());
        };
        if now_ms.saturating_sub(self.retention.swept_ms) >= (ttl / 2).max(1) {
            self.retention.swept_ms = now_ms;
            self.expire_idle()?;
        }
        Ok(())
    }

    /// Table rebuilds skipped because they did not fit the memory budget.
    pub fn compactions_skipped(&self) -> u64 {
        self.retention.compaction_skipped
    }

    fn expired(&self, g: usize, ttl: i64) -> bool {
        self.live.is_live(g)
            && self
                .retention
                .written
                .get(g)
                .is_some_and(|&w| w.saturating_add(ttl) <= self.retention.now_ms)
    }

    /// Clears the listed groups whose state has expired (before it is read).
    pub(super) fn expire(&mut self, groups: &[u32]) {
        let Some(ttl) = self.ttl_ms() else {
            return;
        };
        let stale: Vec<u32> = groups
            .iter()
            .copied()
            .filter(|&g| self.expired(g as usize, ttl))
            .collect();
        self.clear_groups(&stale);
    }

    /// Records that the listed groups' state was written now (changed,
    /// for a write-back to Flink's state backend, and for state TTL).
    pub(super) fn touch(&mut self, groups: &[u32]) {
        self.mark_changed(groups);
        self.record_write(groups);
    }

    /// Records the listed groups' write time for state TTL (a load from
    /// the state backend counts as a write now, as a restore does).
    pub(super) fn record_write(&mut self, groups: &[u32]) {
        let now = self.retention.now_ms;
        self.record_writes(groups.iter().map(|&g| (g, now)));
    }

    /// Records the listed groups' write times (`at[i]` for `groups[i]`, ms),
    /// as read with their state from Flink's TTL state.
    pub(super) fn record_write_at(&mut self, groups: &[u32], at: &[i64]) {
        self.record_writes(groups.iter().copied().zip(at.iter().copied()));
    }

    /// Records each `(group, write time ms)` (state TTL only).
    fn record_writes(&mut self, writes: impl Iterator<Item = (u32, i64)>) {
        if self.ttl_ms().is_none() {
            return;
        }
        let now = self.retention.now_ms;
        let written = &mut self.retention.written;
        if written.len() < self.live.len() {
            written.resize(self.live.len(), now);
        }
        for (g, t) in writes {
            written[g as usize] = t;
        }
    }

    /// Records a state write for those of `groups` that hold state.
    pub(super) fn touch_live(&mut self, groups: &[u32]) {
        let kept: Vec<u32> = groups
            .iter()
            .copied()
            .filter(|&g| self.live[g as usize])
            .collect();
        self.touch(&kept);
    }

    /// Clears the current batch's groups whose state expired.
    pub(super) fn expire_batch_groups(&mut self) {
        let ids = std::mem::take(&mut self.ids);
        self.expire(&ids);
        self.ids = ids;
    }

    /// Clears every expired group, and rebuilds the state without the
    /// groups that hold none once they outnumber the live ones. Returns the
    /// number of groups cleared. Does nothing while a bundle is open.
    pub fn expire_idle(&mut self) -> Result<usize> {
        let Some(ttl) = self.ttl_ms() else {
            return Ok(0);
        };
        if self.has_open_bundle() {
            return Ok(0);
        }
        let stale: Vec<u32> = (0..self.live.len() as u32)
            .filter(|&g| self.expired(g as usize, ttl))
            .collect();
        self.clear_groups(&stale);
        let live = self.num_groups();
        let dead = self.table.len() - live;
        if dead >= MIN_COMPACTION && dead > live {
            // A rebuild that does not fit beside the current state within
            // the budget is skipped: the expired groups are cleared either
            // way, only their slots stay allocated until a later sweep.
            if self.compact().is_err() {
                self.retention.compaction_skipped += 1;
            }
        }
        Ok(stale.len())
    }

    /// Rebuilds table and accumulators with the live groups only (through
    /// the snapshot format), keeping their write times and the bundle map's
    /// grown capacity.
    fn compact(&mut self) -> Result<()> {
        let hashes = self.table.key_hashes();
        let mut order: Vec<(u16, u32)> = (0..self.live.len() as u32)
            .filter(|&g| self.live[g as usize])
            .map(|g| {
                let kg = key_group_for_hash(hashes[g as usize], self.plan.max_parallelism);
                (kg, g)
            })
            .collect();
        // The order snapshot() writes groups in, and restore() numbers them.
        order.sort_unstable();
        self.keep_dropped_deletes()?;
        let payloads = self.snapshot()?;
        // The rebuilt state is built while the current one still exists:
        // it gets what the budget has left.
        let mut plan = self.plan.clone();
        plan.memory_budget_bytes = self
            .plan
            .memory_budget_bytes
            .saturating_sub(self.measure() + payloads.iter().map(|(_, p)| p.len()).sum::<usize>());
        let mut fresh = GroupAggOperator::new(plan)?;
        fresh.retention.now_ms = self.retention.now_ms;
        fresh.retention.swept_ms = self.retention.swept_ms;
        fresh.retention.compaction_skipped = self.retention.compaction_skipped;
        fresh.restore(&payloads)?;
        for (new, &(_, old)) in order.iter().enumerate() {
            fresh.retention.written[new] = self.retention.written[old as usize];
        }
        let old_ids: Vec<u32> = order.iter().map(|&(_, g)| g).collect();
        self.move_flink_state(&mut fresh, &old_ids);
        std::mem::swap(&mut fresh.order, &mut self.order);
        fresh.plan = self.plan.clone();
        fresh.budget = crate::memory::MemoryBudget::new(self.plan.memory_budget_bytes);
        let used = fresh.measure();
        fresh.budget.set_used(used);
        *self = fresh;
        Ok(())
    }
}
