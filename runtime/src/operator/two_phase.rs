//! Two-phase aggregation: the local phase (Flink's
//! MiniBatchLocalGroupAggFunction) folds a bundle into fresh accumulators
//! and emits their partials; the global phase
//! (MiniBatchGlobalGroupAggFunction) merges partials into per-bundle
//! accumulators and, at the flush, into state, emitting the changelog.

use std::sync::Arc;

use arrow_array::{Int8Array, RecordBatch};

use super::changelog::{self, pairs, Change, Rules, BEFORE};
use super::input::Input;
use super::retract::emptied;
use super::views;
use super::GroupAggOperator;
use crate::error::Result;
use crate::types::RowKind;

impl GroupAggOperator {
    /// Local phase: rows go into fresh per-bundle accumulators, indexed by
    /// the bundle table's ids (first-touch order).
    pub(super) fn process_local(&mut self, input: &Input<'_>) -> Result<()> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        let ordered_bytes = input.num_rows * self.ordered.bytes_per_row();
        self.reserve_after_intern(before, table_bytes, 0, (ordered_bytes, 0), input)?;
        self.grow_groups();
        self.ordered.record_local(&self.plan, input, &self.ids);
        // The bundle's earlier groups are live since their first batch.
        let first_touched: Vec<u32> = (before as u32..self.table.len() as u32).collect();
        self.fold_rows(input, &first_touched)
    }

    /// Local phase flush: every bundle group's partials as +I rows, in the
    /// order of Flink's bundle HashMap; the bundle starts empty. A group a
    /// row failed (SINGLE_VALUE) fails the query where Flink's loop folds
    /// its rows, after the partials of the groups before it.
    pub(super) fn flush_local(&mut self) -> Result<Option<RecordBatch>> {
        let n = self.table.len();
        if n == 0 {
            return Ok(None);
        }
        let groups: Vec<u32> = (0..n as u32).collect();
        let mut order = self.hash_map_order(&groups);
        if let Some((at, message)) = self.first_failed_position(&order) {
            order.truncate(at);
            self.failure = Some(message);
        }
        let n = order.len();
        let mut columns = self.table.keys(&order)?;
        let (partials, mut view_columns) =
            views::partials_with_views(&self.plan, &self.views, &self.accs, &self.in_view, &order)?;
        columns.extend(partials);
        self.ordered
            .local_columns(&self.views, &mut view_columns, &order)?;
        columns.extend(view_columns);
        columns.push(Arc::new(Int8Array::from(vec![RowKind::Insert as i8; n])));
        let out = RecordBatch::try_new(self.schema.clone(), columns)?;
        self.table.clear();
        for acc in &mut self.accs {
            acc.reset();
        }
        self.live.clear();
        self.bundle.truncate_groups(0);
        let measured = self.measure();
        self.budget.set_used(measured);
        Ok(Some(out))
    }

    /// Global phase: partial rows are merged into per-bundle accumulators
    /// (Flink's `localAgg.merge` in `addInput`); state is touched at flush.
    pub(super) fn process_global(&mut self, input: &Input<'_>) -> Result<()> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        let fresh = self.new_slots();
        let ordered_bytes = input.num_rows * self.ordered.bytes_per_row();
        self.reserve_after_intern(before, table_bytes, fresh.len(), (ordered_bytes, 0), input)?;
        self.grow_groups();
        for &g in &fresh {
            self.bundle.slot_of[g as usize] = self.bundle.touched.len() as u32;
            self.bundle.touched.push(g);
        }
        let slots = self.bundle.touched.len();
        let slot_ids: Vec<u32> = self
            .ids
            .iter()
            .map(|&g| self.bundle.slot_of[g as usize])
            .collect();
        self.ordered.record_global(&self.views, input, &slot_ids)?;
        for (acc, partials) in self.bundle_accs.iter_mut().zip(&input.args) {
            acc.resize(slots);
            acc.merge(partials, &slot_ids)?;
        }
        // A partial that fails its bundle group (SINGLE_VALUE) fails the
        // query at that row, in Flink's `addInput`: the bundle emits nothing.
        // (Only this batch's slots can have failed: an earlier failure
        // already refused this call.)
        if let Some((_, message)) = self.bundle_accs[..self.visible]
            .iter()
            .find_map(|a| a.failed_position(&slot_ids))
        {
            self.failure = Some(message);
        }
        Ok(())
    }

    /// Global phase flush: merges each bundle group's partials into its
    /// state and emits one change per group, its result after the merge
    /// against its result before.
    pub(super) fn flush_global(&mut self) -> Result<Option<RecordBatch>> {
        if self.bundle.is_empty() {
            return Ok(None);
        }
        let touched = self.bundle.touched.clone();
        let order = self.hash_map_order(&touched);
        let groups: Vec<u32> = order.iter().map(|&s| touched[s as usize]).collect();
        // Flink reads each key's state at finishBundle.
        self.expire(&groups);
        let before = self.evaluate_all(&groups)?;
        let mut partials = Vec::with_capacity(self.bundle_accs.len());
        for acc in &self.bundle_accs {
            partials.push(acc.partials(&order)?);
        }
        self.ordered
            .order_global(&self.plan, &self.views, &mut partials, &order)?;
        for (acc, p) in self.accs.iter_mut().zip(&partials) {
            acc.merge(p, &groups)?;
        }
        // A group whose merge failed (SINGLE_VALUE) fails the query where
        // Flink's loop reaches it, after the changes of the groups before.
        let mut groups = groups;
        let mut before = before;
        if let Some((at, message)) = self.first_failed_position(&groups) {
            groups.truncate(at);
            for column in &mut before {
                *column = column.slice(0, at);
            }
            self.failure = Some(message);
        }
        let after = self.evaluate_all(&groups)?;
        let counts = self.record_counts(&groups)?;
        // Positions (in flush order) of groups that had state before.
        let had_state: Vec<u32> = groups
            .iter()
            .enumerate()
            .filter(|(_, &g)| self.live[g as usize])
            .map(|(pos, _)| pos as u32)
            .collect();
        let changed = changelog::changed(
            &self.accs[..self.visible],
            &before,
            &had_state,
            &after,
            &had_state,
        )?;
        // Record count zero: the state is cleared (after -D of the previous
        // result).
        let emptied = emptied(&groups, counts.as_deref());
        for &g in &groups {
            self.live.set(g as usize);
        }
        self.clear_groups(&emptied);
        self.touch_live(&groups);
        let keys = self.table.keys(&groups)?;
        let mut had_state = had_state.iter().zip(changed).peekable();
        let changes = (0..groups.len()).map(|pos| {
            let known = had_state.next_if(|(&p, _)| p as usize == pos);
            Change {
                row: pos as u32,
                prev: known.map(|_| (BEFORE, pos)),
                emptied: counts.as_ref().is_some_and(|c| c[pos] == 0),
                changed: known.is_some_and(|(_, changed)| changed),
            }
        });
        let out = changelog::emit(
            Rules::of(&self.plan),
            changes,
            &self.schema,
            &keys,
            &pairs(before, after),
        )?;
        for acc in &mut self.bundle_accs {
            acc.reset();
        }
        self.bundle.clear();
        Ok(Some(out))
    }
}
