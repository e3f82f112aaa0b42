//! Flink's rules for retracting input (-U/-D rows), shared by the
//! operators:
//!
//! - a group's record count is the first COUNT(*) call's count, or the
//!   COUNT(*) the planner inserts (`GroupAggOperator::counter`); when it
//!   reaches zero the group emits -D of its previous result (nothing if it
//!   had no state before) and its state is cleared;
//! - a retraction for a group without state is dropped (GroupAggFunction),
//!   and in mini-batch only the leading retractions of such a group in the
//!   bundle (MiniBatchGroupAggFunction);
//! - MiniBatchGroupAggFunction's `return` where `continue` was meant: a
//!   bundle key without state whose rows are all retractions ends
//!   `finishBundle`, so the keys after it (in HashMap order) lose their
//!   bundle rows. The operator applies rows eagerly, so it rolls those
//!   keys back to their pre-bundle state.

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, UInt32Array};
use arrow_select::concat::{concat, concat_batches};
use arrow_select::take::take;

use super::bundle::NONE;
use super::changelog::{Changelog, AFTER, BEFORE};
use super::input::Input;
use super::GroupAggOperator;
use crate::accumulator::BatchUpdate;
use crate::error::{AggError, Result};
use crate::kernel::is_retract;
use crate::types::RowKind;

/// The batch's row kinds when at least one row retracts.
pub(super) fn retracting_rows<'a>(input: &Input<'a>) -> Option<&'a [i8]> {
    input
        .row_kinds
        .filter(|kinds| kinds.iter().any(|&k| is_retract(k)))
}

/// What one row does in immediate mode over retracting input.
#[derive(Debug, Clone, Copy, Default)]
struct RowFate {
    /// Applied (not a retraction for a group without state).
    accepted: bool,
    /// The group had no state before the row (+I unless it also empties).
    first: bool,
    /// The row brings the record count to zero (-D, state cleared).
    empties: bool,
}

impl GroupAggOperator {
    /// The record count of each listed group, when the plan counts records.
    pub(super) fn record_counts(&self, groups: &[u32]) -> Result<Option<Vec<i64>>> {
        let Some(counter) = self.counter else {
            return Ok(None);
        };
        let column = self.accs[counter].evaluate(groups)?;
        let counts = column
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| AggError::Input("the record counter is not a BIGINT count".into()))?;
        Ok(Some(counts.values().to_vec()))
    }

    /// Gives the listed groups fresh state and marks them without state.
    pub(super) fn clear_groups(&mut self, groups: &[u32]) {
        if groups.is_empty() {
            return;
        }
        for acc in &mut self.accs {
            acc.clear(groups);
        }
        for &g in groups {
            self.live.unset(g as usize);
        }
    }

    /// Single phase, mini-batch: folds the rows Flink would apply (a group
    /// without state drops its leading retractions) and marks their groups
    /// as having state.
    pub(super) fn fold_accepted(&mut self, input: &Input<'_>) -> Result<()> {
        let mut accept = Vec::with_capacity(self.ids.len());
        for (i, &g) in self.ids.iter().enumerate() {
            let retract = input.row_kinds.is_some_and(|k| is_retract(k[i]));
            let ok = self.live[g as usize] || !retract;
            if ok {
                self.live.set(g as usize);
            }
            accept.push(ok);
        }
        let filter = accept
            .iter()
            .any(|&a| !a)
            .then(|| BooleanArray::from(accept));
        for (acc, args) in self.accs.iter_mut().zip(&input.args) {
            acc.update(&BatchUpdate {
                args,
                group_ids: &self.ids,
                filter: filter.as_ref(),
                row_kinds: input.row_kinds,
            })?;
        }
        Ok(())
    }

    /// The state columns of each accumulator for the groups first touched
    /// now, kept in the bundle for [`GroupAggOperator::cut_bundle`].
    pub(super) fn snapshot_for_rollback(&self, first_live: &[u32]) -> Result<Vec<Vec<ArrayRef>>> {
        self.accs
            .iter()
            .map(|acc| acc.snapshot(first_live))
            .collect()
    }

    /// Applies Flink's early end of `finishBundle`: returns how many slots
    /// of `order` are flushed; the slots after the first key without state
    /// whose rows were all dropped go back to their pre-bundle state.
    pub(super) fn cut_bundle(&mut self, order: &[u32]) -> Result<usize> {
        let touched = &self.bundle.touched;
        let Some(cut) = order.iter().position(|&s| {
            let g = touched[s as usize] as usize;
            !self.live[g] && self.bundle.prev_pos[s as usize] == NONE
        }) else {
            return Ok(order.len());
        };
        let mut restore_groups = Vec::new();
        let mut restore_rows = Vec::new();
        let mut fresh = Vec::new();
        for &s in &order[cut + 1..] {
            let g = touched[s as usize];
            match self.bundle.prev_pos[s as usize] {
                NONE => fresh.push(g),
                p => {
                    restore_groups.push(g);
                    restore_rows.push(p);
                }
            }
        }
        self.clear_groups(&fresh);
        if !restore_groups.is_empty() {
            let rows = UInt32Array::from(restore_rows);
            for c in 0..self.accs.len() {
                let chunks = &self.bundle.saved[c];
                let width = self.accs[c].state_types().len();
                let mut columns = Vec::with_capacity(width);
                for j in 0..width {
                    let parts: Vec<&dyn Array> = chunks.iter().map(|ch| ch[j].as_ref()).collect();
                    columns.push(take(concat(&parts)?.as_ref(), &rows, None)?);
                }
                self.accs[c].restore(&columns, &restore_groups)?;
            }
        }
        Ok(cut)
    }

    /// Single phase, immediate, over a batch with retractions: Flink's
    /// GroupAggFunction row by row. The batch is cut after each row that
    /// empties a group, so every piece is folded with the traced kernels
    /// and no group is cleared inside a piece.
    pub(super) fn process_immediate_retracting(
        &mut self,
        input: &Input<'_>,
        kinds: &[i8],
    ) -> Result<RecordBatch> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        self.reserve_after_intern(before, table_bytes, 0, (0, 0), input)?;
        self.grow_groups();
        self.expire_batch_groups();
        let ids = std::mem::take(&mut self.ids);
        let result = self.fold_pieces(input, kinds, &ids);
        self.ids = ids;
        result
    }

    fn fold_pieces(&mut self, input: &Input<'_>, kinds: &[i8], ids: &[u32]) -> Result<RecordBatch> {
        let fates = self.row_fates(kinds, ids)?;
        let mut outputs = Vec::new();
        let mut start = 0;
        while start < ids.len() {
            let end = fates[start..]
                .iter()
                .position(|f| f.empties)
                .map_or(ids.len(), |p| start + p + 1);
            outputs.push(self.fold_piece(input, kinds, ids, &fates, start, end)?);
            start = end;
        }
        Ok(concat_batches(&self.schema, &outputs)?)
    }

    /// Walks the rows with each group's state flag and record count.
    fn row_fates(&self, kinds: &[i8], ids: &[u32]) -> Result<Vec<RowFate>> {
        let mut seen: Vec<u32> = ids.to_vec();
        seen.sort_unstable();
        seen.dedup();
        let live: Vec<u32> = seen
            .iter()
            .copied()
            .filter(|&g| self.live[g as usize])
            .collect();
        let counts = self.record_counts(&live)?.unwrap_or_default();
        let mut walk: std::collections::HashMap<u32, (bool, i64)> = live
            .iter()
            .zip(counts)
            .map(|(&g, c)| (g, (true, c)))
            .collect();
        let mut fates = Vec::with_capacity(ids.len());
        for (&g, &kind) in ids.iter().zip(kinds) {
            let (has_state, count) = walk.entry(g).or_insert((false, 0));
            let retract = is_retract(kind);
            let mut fate = RowFate::default();
            if !*has_state {
                if retract {
                    fates.push(fate);
                    continue;
                }
                *has_state = true;
                *count = 0;
                fate.first = true;
            }
            fate.accepted = true;
            *count = count.wrapping_add(if retract { -1 } else { 1 });
            if *count == 0 {
                fate.empties = true;
                *has_state = false;
            }
            fates.push(fate);
        }
        Ok(fates)
    }

    /// Folds rows `start..end` (no group empties before `end - 1`) and
    /// returns their changelog.
    fn fold_piece(
        &mut self,
        input: &Input<'_>,
        kinds: &[i8],
        ids: &[u32],
        fates: &[RowFate],
        start: usize,
        end: usize,
    ) -> Result<RecordBatch> {
        let len = end - start;
        let piece_ids = &ids[start..end];
        let piece_fates = &fates[start..end];
        // Where each accepted row's previous result comes from.
        let mut prev_src = vec![(BEFORE, 0usize); len];
        let mut first_live = Vec::new();
        let mut last: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for (j, (&g, fate)) in piece_ids.iter().zip(piece_fates).enumerate() {
            if !fate.accepted {
                continue;
            }
            match last.insert(g, j) {
                Some(prev) => prev_src[j] = (AFTER, prev),
                None if !fate.first => {
                    prev_src[j] = (BEFORE, first_live.len());
                    first_live.push(g);
                }
                None => {}
            }
        }
        let prev = self.evaluate_all(&first_live)?;
        let filter = piece_fates.iter().any(|f| !f.accepted).then(|| {
            BooleanArray::from(piece_fates.iter().map(|f| f.accepted).collect::<Vec<_>>())
        });
        let args: Vec<Vec<ArrayRef>> = input
            .args
            .iter()
            .map(|cols| cols.iter().map(|a| a.slice(start, len)).collect())
            .collect();
        let mut changed = vec![false; len];
        let traced = self.traced_update(
            &args,
            piece_ids,
            filter.as_ref(),
            Some(&kinds[start..end]),
            &mut changed,
        )?;
        let emit_unchanged = self.plan.state_ttl_ms > 0;
        let mut log = Changelog::default();
        let mut emptied = Vec::new();
        for (j, fate) in piece_fates.iter().enumerate() {
            if !fate.accepted {
                continue;
            }
            let g = piece_ids[j];
            self.live.set(g as usize);
            let (src, idx) = prev_src[j];
            if fate.empties {
                if !fate.first {
                    log.push(RowKind::Delete, j as u32, src, idx);
                }
                emptied.push(g);
            } else if fate.first {
                log.push(RowKind::Insert, j as u32, AFTER, j);
            } else if changed[j] || emit_unchanged {
                if self.plan.generate_update_before {
                    log.push(RowKind::UpdateBefore, j as u32, src, idx);
                }
                log.push(RowKind::UpdateAfter, j as u32, AFTER, j);
            }
        }
        let written: Vec<u32> = piece_ids
            .iter()
            .zip(piece_fates)
            .filter(|(_, f)| f.accepted)
            .map(|(&g, _)| g)
            .collect();
        self.touch(&written);
        self.clear_groups(&emptied);
        let keys: Vec<ArrayRef> = input.keys.iter().map(|k| k.slice(start, len)).collect();
        log.finish(&self.schema, &keys, &super::before_after(prev, traced))
    }
}
