//! Flink's rules for retracting input (-U/-D rows), shared by the
//! operators:
//!
//! - a group's record count is the first COUNT(*) call's count, or the
//!   COUNT(*) the planner inserts (`GroupAggOperator::counter`); when it
//!   reaches zero the group emits -D of its previous result (nothing if it
//!   had no state before) and its state is cleared;
//! - a retraction for a group without state is dropped (GroupAggFunction,
//!   see `immediate`), and in mini-batch only the leading retractions of
//!   such a group in the bundle (MiniBatchGroupAggFunction, see
//!   `minibatch`, which also reproduces its early end of `finishBundle`).

use arrow_array::{Array, Int64Array};

use super::input::Input;
use super::GroupAggOperator;
use crate::error::{AggError, Result};
use crate::kernel::is_retract;

/// The batch's row kinds when at least one row retracts.
pub(super) fn retracting_rows<'a>(input: &Input<'a>) -> Option<&'a [i8]> {
    input
        .row_kinds
        .filter(|kinds| kinds.iter().any(|&k| is_retract(k)))
}

/// The listed groups whose record count (`counts`, by position) is zero.
pub(super) fn emptied(groups: &[u32], counts: Option<&[i64]>) -> Vec<u32> {
    match counts {
        Some(counts) => groups
            .iter()
            .zip(counts)
            .filter(|(_, &c)| c == 0)
            .map(|(&g, _)| g)
            .collect(),
        None => Vec::new(),
    }
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
        self.mark_changed(groups);
    }
}
