//! The interface every generated accumulator implements, and the batch
//! view the operators hand it.
//!
//! An accumulator holds one aggregate call's state for many groups, as
//! columnar vectors indexed by dense `u32` group id. The operators own the
//! group table and the changelog; accumulators only fold values.

use std::any::Any;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray};
use arrow_schema::DataType;

use crate::error::{AggError, Result};
use crate::types::Phase;

/// A DISTINCT view shared by the calls over one argument (Flink's
/// DistinctInfo), type-erased: each call checks it is over its own carrier
/// when it joins.
pub type ViewHandle = Arc<dyn Any + Send + Sync>;

/// What a DISTINCT view pass gives one call: the rows that changed its set
/// of values (the inner template's FILTER) and, over a batch with row
/// kinds, the kinds the inner template sees (-D where a value leaves).
#[derive(Debug)]
pub struct DistinctRows {
    /// Rows that changed the call's set of values.
    pub changes: BooleanArray,
    /// The inner template's row kinds (retracting input with row kinds).
    pub kinds: Option<Vec<i8>>,
}

/// One batch of input for one aggregate call.
#[derive(Debug, Clone, Copy)]
pub struct BatchUpdate<'a> {
    /// The call's argument columns (empty for COUNT(*)).
    pub args: &'a [ArrayRef],
    /// Group id of every row; each is below the accumulator's `num_groups`.
    pub group_ids: &'a [u32],
    /// FILTER (WHERE ...) column: a row counts only where it is true.
    pub filter: Option<&'a BooleanArray>,
    /// Flink row kinds (0 +I, 1 -U, 2 +U, 3 -D); `None` means insert-only.
    pub row_kinds: Option<&'a [i8]>,
    /// A DISTINCT call's rows already run through its shared view (by
    /// [`GroupAccumulator::distinct_pass`]); `None`: the call runs them
    /// through its view itself.
    pub distinct: Option<&'a DistinctRows>,
}

impl BatchUpdate<'_> {
    /// Number of rows in the batch.
    pub fn len(&self) -> usize {
        self.group_ids.len()
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.group_ids.is_empty()
    }
}

/// Columnar state of one aggregate call over many groups.
///
/// Methods that a phase never calls may return
/// [`AggError::Unsupported`](crate::error::AggError::Unsupported).
pub trait GroupAccumulator: Send + std::fmt::Debug {
    /// Specialization name, e.g. `MIN<INT>/insert_only`, shown by EXPLAIN.
    fn name(&self) -> &'static str;

    /// Arrow type of the call's result.
    fn result_type(&self) -> DataType;

    /// Arrow types of the partial (two-phase) layout, in Flink's order.
    fn partial_types(&self) -> Vec<DataType>;

    /// Arrow types of the snapshot columns.
    fn state_types(&self) -> Vec<DataType>;

    /// Fixes the call's phase and argument count, once, right after the
    /// accumulator is created (its partial and state layouts may depend
    /// on them); see [`crate::registry::Admission::create_call`].
    fn configure_call(&mut self, _phase: Phase, _args: usize) {}

    /// Number of groups state is held for.
    fn num_groups(&self) -> usize;

    /// Bytes one more group costs, for memory-budget checks made before
    /// state grows.
    fn bytes_per_group(&self) -> usize;

    /// Upper bound of the bytes state grows by per folded input row beyond
    /// [`GroupAccumulator::bytes_per_group`] (a multiset entry); 0 for
    /// fixed-size state.
    fn bytes_per_input_row(&self) -> usize {
        0
    }

    /// Grows state to `total_groups`; new groups take the initial state.
    fn resize(&mut self, total_groups: usize);

    /// Folds a batch of raw rows. Retracting specializations retract the
    /// rows whose kind is -U or -D, in row order; insert-only ones reject
    /// them.
    fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()>;

    /// Folds a batch of raw rows and returns, for every row, the call's
    /// result right after that row was applied (immediate emission). Sets
    /// `changed[row]` when that result differs from the one before the row
    /// under Flink's record-equaliser rules; never clears a flag.
    fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef>;

    /// Sets `changed[i]` where `before[i]` and `after[i]` (two result
    /// columns of this accumulator) differ under the result type's equality
    /// rule (Java `==` for FLOAT/DOUBLE: NaN != NaN, -0.0 == 0.0; NULL
    /// equals NULL), for mini-batch emission; never clears a flag.
    fn mark_changed(&self, before: &ArrayRef, after: &ArrayRef, changed: &mut [bool])
        -> Result<()>;

    /// Merges partial columns (Flink layout) into the given groups.
    fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()>;

    /// Sets fresh groups from partial columns read back from Flink's
    /// state backend: a merge, but a DISTINCT call takes its aggregate's
    /// columns as they are and its view as it is (a merge would fold the
    /// view's values again, in another order).
    fn load(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
        self.merge(partials, group_ids)
    }

    /// State in Flink's layout: a call that keeps data views (a DISTINCT
    /// call's view, the map of MIN/MAX over retractions) starts logging
    /// the view entries that change. Others: nothing.
    fn start_view_log(&mut self) {}

    /// A call with a view log: forgets the logged entries (written back).
    fn clear_view_log(&mut self) {}

    /// State in Flink's layout: whether the call's own accumulator holds
    /// data views that Flink keeps as map states beside `accState` (MIN/MAX
    /// over retractions: `agg<i>$map`), carried inside its partial column.
    fn keeps_state_views(&self) -> bool {
        false
    }

    /// The partial columns of the listed groups as a write-back into
    /// Flink's layout carries them: [`partials`](Self::partials), but a
    /// call that [keeps state views](Self::keeps_state_views) and logs
    /// them gives, unless `whole`, only the view entries changed since the
    /// log was cleared.
    fn state_partials(&self, groups: &[u32], whole: bool) -> Result<Vec<ArrayRef>> {
        let _ = whole;
        self.partials(groups)
    }

    /// A DISTINCT call with a log: its view's entries changed since the
    /// log was cleared, of the listed groups. Others: `None`.
    fn view_changes(
        &self,
        _groups: &[u32],
    ) -> Result<Option<crate::templates::distinct_view::ChangedEntries>> {
        Ok(None)
    }

    /// The current result of each listed group.
    fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef>;

    /// The partial columns (Flink layout) of each listed group.
    fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>>;

    /// [`GroupAccumulator::partials`] without a DISTINCT call's view list:
    /// the inner aggregate's own columns (the incremental aggregate's
    /// output, Flink's `excludeAcc`).
    fn result_partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.partials(groups)
    }

    /// The state columns of each listed group, for snapshots.
    fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>>;

    /// Sets the state of each listed group from snapshot columns.
    fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()>;

    /// Gives the listed groups a fresh state (Flink clears a group's
    /// accumulators when its record count reaches zero).
    fn clear(&mut self, groups: &[u32]);

    /// Gives the listed groups a fresh aggregate state but keeps the values
    /// a DISTINCT view holds (Flink's incremental aggregate resets its
    /// accumulators every bundle and keeps its views in state); the same
    /// as [`GroupAccumulator::clear`] for a call that is not DISTINCT.
    fn clear_results(&mut self, groups: &[u32]) {
        self.clear(groups);
    }

    /// Drops every group (the local phase does this after each bundle).
    fn reset(&mut self);

    /// Frees the allocations a [`reset`](GroupAccumulator::reset) kept for
    /// the next bundle's groups (counted in `memory_bytes`); the operator
    /// calls it when the memory budget refuses a reservation.
    fn release_spare(&mut self) {}

    /// Bytes of state held, heap included.
    fn memory_bytes(&self) -> usize;

    /// The first row of the latest `update`/`update_traced` this call
    /// refused, with Flink's message: its function fails the query there
    /// (SINGLE_VALUE's second value). The refused row and the failed
    /// group's later rows were not folded.
    fn refused_row(&self) -> Option<(usize, &'static str)> {
        None
    }

    /// The position in `groups` of the first group a refused row failed,
    /// with the message (mini-batch: the flush fails there).
    fn failed_position(&self, _groups: &[u32]) -> Option<(usize, &'static str)> {
        None
    }

    /// The fused loop's lowering of this call's update (`crate::jit`),
    /// with its retraction for a call over retracting input; `None` keeps
    /// the call on its static kernel.
    #[cfg(feature = "jit")]
    fn jit_lowering(&self) -> Option<crate::jit::Lowering> {
        None
    }

    /// Base pointers of the state columns [`GroupAccumulator::jit_lowering`]
    /// updates, valid until the state is next resized or reset.
    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        None
    }

    /// A fresh DISTINCT view for `calls` calls over this call's argument;
    /// `None` for a call that is not DISTINCT.
    fn new_distinct_view(&self, _calls: usize) -> Option<ViewHandle> {
        None
    }

    /// Makes this call column `call` of `view` (which must be fresh, before
    /// any row is folded); false, with nothing changed, when the call is
    /// not DISTINCT or the view is over another carrier.
    fn join_distinct_view(&mut self, _view: &ViewHandle, _call: usize) -> bool {
        false
    }

    /// Runs one batch through this call's shared view for all its calls at
    /// once (`batches[c]`: the view's call `c`'s update, all over the same
    /// argument column): per call, the rows that changed its set. The view
    /// is updated; each call then folds its rows with
    /// [`BatchUpdate::distinct`] set.
    fn distinct_pass(&mut self, _batches: &[BatchUpdate<'_>]) -> Result<Vec<DistinctRows>> {
        Err(AggError::Unsupported(format!(
            "{} has no DISTINCT view",
            self.name()
        )))
    }
}
