//! Single phase, mini-batch: Flink's MiniBatchGroupAggFunction. Rows are
//! applied to state as they arrive; the result each group had before the
//! bundle is kept, and [`flush`](GroupAggOperator::flush) emits one change
//! per bundle group in the order of Flink's bundle HashMap.
//!
//! Over retracting input, a group without state drops its leading
//! retractions in the bundle, and Flink's `return` where `continue` was
//! meant is reproduced: a bundle key without state whose rows are all
//! retractions ends `finishBundle`, so the keys after it (in HashMap
//! order) lose their bundle rows. The operator applies rows eagerly, so
//! it rolls those keys back to their pre-bundle state.

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt32Array};
use arrow_select::concat::concat;
use arrow_select::take::take;

use super::bundle::NONE;
use super::changelog::{self, pairs, Change, Rules, BEFORE};
use super::input::Input;
use super::retract::emptied;
use super::GroupAggOperator;
use crate::error::Result;
use crate::kernel::is_retract;
use crate::types::InputMode;

impl GroupAggOperator {
    /// Buffers a batch into the bundle: rows are applied to state now, and
    /// the result (and over retracting input the state) each group had
    /// before the bundle is kept for the flush.
    pub(super) fn process_bundled(&mut self, input: &Input<'_>) -> Result<()> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        let fresh = self.new_slots();
        // State is read when a group enters the bundle.
        self.expire(&fresh);
        let first_live: Vec<u32> = fresh
            .iter()
            .copied()
            .filter(|&g| (g as usize) < before && self.live[g as usize])
            .collect();
        // Pre-bundle results, and over retracting input the pre-bundle
        // state too (for the rollback of `cut_bundle`).
        let retracting = self.plan.input == InputMode::Retracting;
        let kept = self.evaluate_all(&first_live).and_then(|prev| {
            let saved = if retracting {
                self.snapshot_for_rollback(&first_live)?
            } else {
                Vec::new()
            };
            Ok((prev, saved))
        });
        let (prev, saved) = match kept {
            Ok(kept) => kept,
            Err(e) => {
                self.undo_intern(before);
                return Err(e);
            }
        };
        let prev_bytes: usize = prev
            .iter()
            .chain(saved.iter().flatten())
            .map(|a| a.get_array_memory_size())
            .sum();
        self.reserve_after_intern(before, table_bytes, fresh.len(), (prev_bytes, 0), input)?;
        self.grow_groups();
        for &g in &fresh {
            let gi = g as usize;
            self.bundle.slot_of[gi] = self.bundle.touched.len() as u32;
            self.bundle.touched.push(g);
            let had_state = gi < before && self.live[gi];
            if had_state {
                self.bundle.prev_pos.push(self.bundle.prev_len as u32);
                self.bundle.prev_len += 1;
            } else {
                self.bundle.prev_pos.push(NONE);
            }
        }
        for (chunks, p) in self.bundle.prev.iter_mut().zip(prev) {
            chunks.push(p);
        }
        if retracting {
            for (chunks, columns) in self.bundle.saved.iter_mut().zip(saved) {
                chunks.push(columns);
            }
            return self.fold_accepted(input);
        }
        self.fold_rows(input, &fresh)
    }

    /// Flink's `finishBundle`: one change per bundle group, its result now
    /// against its result before the bundle.
    pub(super) fn flush_bundled(&mut self) -> Result<Option<RecordBatch>> {
        if self.bundle.is_empty() {
            return Ok(None);
        }
        let touched = self.bundle.touched.clone();
        let mut order = self.hash_map_order(&touched);
        if self.plan.input == InputMode::Retracting {
            let kept = self.cut_bundle(&order)?;
            order.truncate(kept);
        }
        let mut groups: Vec<u32> = order.iter().map(|&s| touched[s as usize]).collect();
        // A failed group fails the query where Flink's loop reaches it,
        // after the changes of the groups before it.
        if let Some((at, message)) = self.first_failed_position(&groups) {
            order.truncate(at);
            groups.truncate(at);
            self.failure = Some(message);
        }
        let after = self.evaluate_all(&groups)?;
        let counts = self.record_counts(&groups)?;
        let mut before = Vec::with_capacity(self.visible);
        for chunks in &self.bundle.prev {
            let parts: Vec<&dyn Array> = chunks.iter().map(|a| a.as_ref()).collect();
            before.push(concat(&parts)?);
        }
        // Positions (in flush order) of groups that had state, and their
        // pre-bundle results, compared under Flink's equaliser.
        let mut old_pos = Vec::new();
        let mut prev_idx = Vec::new();
        for (pos, &s) in order.iter().enumerate() {
            let p = self.bundle.prev_pos[s as usize];
            if p != NONE {
                old_pos.push(pos as u32);
                prev_idx.push(p);
            }
        }
        let changed = changelog::changed(
            &self.accs[..self.visible],
            &before,
            &prev_idx,
            &after,
            &old_pos,
        )?;
        // Record count zero: the state is cleared (after -D of the previous
        // result).
        let emptied = emptied(&groups, counts.as_deref());
        self.clear_groups(&emptied);
        self.touch_live(&groups);
        let keys = self.table.keys(&groups)?;
        let mut changed = changed.into_iter();
        let bundle = &self.bundle;
        let changes = order.iter().enumerate().map(|(pos, &s)| {
            let p = bundle.prev_pos[s as usize];
            let prev = (p != NONE).then_some((BEFORE, p as usize));
            Change {
                row: pos as u32,
                prev,
                emptied: counts.as_ref().is_some_and(|c| c[pos] == 0),
                changed: prev.is_some() && changed.next() == Some(true),
            }
        });
        let out = changelog::emit(
            Rules::of(&self.plan),
            changes,
            &self.schema,
            &keys,
            &pairs(before, after),
        )?;
        self.bundle.clear();
        Ok(Some(out))
    }

    /// Folds the rows Flink would apply (a group without state drops its
    /// leading retractions) and marks their groups as having state.
    fn fold_accepted(&mut self, input: &Input<'_>) -> Result<()> {
        let mut accept = Vec::with_capacity(self.ids.len());
        for (i, &g) in self.ids.iter().enumerate() {
            let retract = input.row_kinds.is_some_and(|k| is_retract(k[i]));
            let ok = self.live[g as usize] || !retract;
            if ok {
                self.live.set(g as usize);
            }
            accept.push(ok);
        }
        if accept.iter().all(|&a| a) {
            // Every row applies: the rows fold as over insert-only input
            // (the fused loop included), row kinds and all; their groups
            // are marked live above.
            return self.fold_rows(input, &[]);
        }
        let filter = BooleanArray::from(accept);
        let rows: Vec<Option<BooleanArray>> = input
            .filters
            .iter()
            .map(|call_filter| super::input::call_rows(call_filter.as_ref(), Some(&filter)))
            .collect();
        let updates = super::input::updates(input, &rows, &self.ids);
        super::shared_views::fold_calls(&mut self.accs, &self.shared, &updates, |_, acc, update| {
            acc.update(update)
        })
    }

    /// The state columns of each accumulator for the groups first touched
    /// now, kept in the bundle for [`GroupAggOperator::cut_bundle`].
    fn snapshot_for_rollback(&self, first_live: &[u32]) -> Result<Vec<Vec<ArrayRef>>> {
        self.accs
            .iter()
            .map(|acc| acc.snapshot(first_live))
            .collect()
    }

    /// Applies Flink's early end of `finishBundle`: returns how many slots
    /// of `order` are flushed; the slots after the first key without state
    /// whose rows were all dropped go back to their pre-bundle state.
    fn cut_bundle(&mut self, order: &[u32]) -> Result<usize> {
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
}
