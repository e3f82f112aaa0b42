//! The memory budget: what state holds now, how much it grows by per group
//! and per bundle slot, what the operator reserves before it folds a batch
//! in (undoing the intern when the budget says no), and the least budget
//! that can hold one batch at all.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use super::input::Input;
use super::GroupAggOperator;
use crate::error::Result;

/// Bytes of a group id in a table slot.
const SLOT_ID_BYTES: usize = 4;
/// Key bytes assumed for a variable-width key or argument (a short string).
const VAR_BYTES: usize = 16;

/// Whether an Arrow type's values live on the heap (state can grow with
/// their bytes).
fn is_var_len(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
    )
}

/// The heap bytes of a column's variable-width values, nested ones too (a
/// partial's map of strings).
fn var_len_bytes(column: &dyn Array) -> usize {
    match column.data_type() {
        t if is_var_len(t) => column.get_buffer_memory_size(),
        DataType::Struct(_) => column
            .as_struct()
            .columns()
            .iter()
            .map(|c| var_len_bytes(c.as_ref()))
            .sum(),
        DataType::List(_) => var_len_bytes(column.as_list::<i32>().values().as_ref()),
        _ => 0,
    }
}

/// The entries of a column's lists, nested ones too: a partial's map
/// entries, each of which a merge may add to state like one folded row.
fn list_entries(column: &dyn Array) -> usize {
    match column.data_type() {
        DataType::Struct(_) => column
            .as_struct()
            .columns()
            .iter()
            .map(|c| list_entries(c.as_ref()))
            .sum(),
        DataType::List(_) => column.as_list::<i32>().values().len(),
        _ => 0,
    }
}

impl GroupAggOperator {
    /// Bytes of state, bundle and scratch held now, measured.
    pub(super) fn measure(&self) -> usize {
        self.table.memory_bytes()
            + self.accs.iter().map(|a| a.memory_bytes()).sum::<usize>()
            + self
                .bundle_accs
                .iter()
                .map(|a| a.memory_bytes())
                .sum::<usize>()
            + self.live.capacity()
            + self.last_row.capacity() * 4
            + self.bundle.memory_bytes()
            + self.ordered.memory_bytes()
            + self.finals.as_ref().map_or(0, |f| f.memory_bytes())
            + self.fusion.code_bytes()
            + self.flink_state.as_ref().map_or(0, |s| s.memory_bytes())
    }

    /// Reserves `bytes`; when the running account says no, frees the
    /// allocations accumulators kept for reuse, re-measures (the account
    /// over-estimates string state) and tries once more.
    /// `pending` is the part of `bytes` already allocated (table growth
    /// of the batch being reserved for), which the measurement excludes.
    pub(super) fn reserve(&mut self, bytes: usize, pending: usize) -> Result<()> {
        if self.budget.try_reserve(bytes).is_ok() {
            return Ok(());
        }
        for acc in self.accs.iter_mut().chain(&mut self.bundle_accs) {
            acc.release_spare();
        }
        if let Some(finals) = &mut self.finals {
            finals.release_spare();
        }
        let measured = self.measure().saturating_sub(pending);
        self.budget.set_used(measured);
        self.budget.try_reserve(bytes)
    }

    /// An upper bound of the bytes state grows by when `new_groups` groups
    /// are added and `input` is folded in, beyond the table's own growth.
    pub(super) fn growth_bound(
        &self,
        new_groups: usize,
        new_slots: usize,
        input: &[Vec<ArrayRef>],
    ) -> usize {
        let per_group = self.bytes_per_new_group();
        let per_slot = self.bytes_per_new_slot();
        let var_bytes: usize = input
            .iter()
            .flatten()
            .map(|c| var_len_bytes(c.as_ref()))
            .sum();
        let factor = if self.bundle_accs.is_empty() { 1 } else { 2 };
        let rows = input.first().and_then(|c| c.first()).map_or(0, |c| c.len());
        let entries: usize = input
            .iter()
            .flatten()
            .map(|c| list_entries(c.as_ref()))
            .sum();
        let per_row: usize = self.accs.iter().map(|a| a.bytes_per_input_row()).sum();
        new_groups * per_group
            + new_slots * per_slot
            + var_bytes * factor
            + (rows + entries) * per_row
    }

    /// Reserves memory for the batch after interning, undoing the intern
    /// when the budget says no.
    /// `extra` bytes are reserved on top; `allocated` of them are already
    /// allocated (scratch grown for this batch).
    pub(super) fn reserve_after_intern(
        &mut self,
        groups_before: usize,
        table_bytes_before: usize,
        new_slots: usize,
        (extra, allocated): (usize, usize),
        input: &Input<'_>,
    ) -> Result<()> {
        let new_groups = self.table.len() - groups_before;
        let table_growth = self.table.memory_bytes().saturating_sub(table_bytes_before);
        let bytes = table_growth + self.growth_bound(new_groups, new_slots, &input.args) + extra;
        if let Err(e) = self.reserve(bytes, table_growth + allocated) {
            self.undo_intern(groups_before);
            return Err(e);
        }
        Ok(())
    }

    /// Bytes of accumulator state one new group takes (plus its liveness
    /// flag and scratch).
    pub(super) fn bytes_per_new_group(&self) -> usize {
        self.accs.iter().map(|a| a.bytes_per_group()).sum::<usize>() + 5
    }

    /// Bytes one new bundle slot takes (global phase).
    pub(super) fn bytes_per_new_slot(&self) -> usize {
        self.bundle_accs
            .iter()
            .map(|a| a.bytes_per_group())
            .sum::<usize>()
            + 8
    }

    /// A lower bound of the budget one batch of `rows` rows needs when every
    /// row starts a new group: each group's accumulator state, bundle slot,
    /// key and table slot, without the slack of growing vectors and of the
    /// table's free slots (the operator reserves up to about 4 times this). Any smaller budget fails on such a
    /// batch, so a plan whose budget is below it is refused at planning.
    pub fn min_budget_bytes(&self, rows: usize) -> usize {
        let key: usize = self
            .key_arrow
            .iter()
            .map(|t| t.primitive_width().unwrap_or(VAR_BYTES))
            .sum();
        let slot = if self.bundle_accs.is_empty() {
            0
        } else {
            self.bytes_per_new_slot()
        };
        rows * (self.bytes_per_new_group() + slot + key + SLOT_ID_BYTES)
    }
}
