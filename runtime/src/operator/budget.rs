//! How much memory state grows by per group and per bundle slot: what the
//! operator reserves before it folds a batch in, and the least budget that
//! can hold one batch at all.

use super::GroupAggOperator;

/// Bytes of a group id in a table slot.
const SLOT_ID_BYTES: usize = 4;
/// Key bytes assumed for a variable-width key or argument (a short string).
const VAR_BYTES: usize = 16;

impl GroupAggOperator {
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
