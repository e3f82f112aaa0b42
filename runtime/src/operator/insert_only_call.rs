//! A call Flink plans without retraction next to retracting ones (e.g. a
//! MAX over a column the planner knows only grows): Flink runs the
//! call's insert-only function, whose retract is a no-op, so the call
//! folds +I/+U rows and skips -U/-D. [`InsertOnlyCall`] wraps the
//! call's insert-only accumulator and hands it only those rows; the
//! record count and every other call still see all rows.

use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_schema::DataType;

use crate::accumulator::{BatchUpdate, DistinctRows, GroupAccumulator, ViewHandle};
use crate::error::Result;
use crate::kernel::is_retract;

/// An insert-only accumulator fed the accumulating rows of a retracting
/// batch.
#[derive(Debug)]
pub(super) struct InsertOnlyCall(pub(super) Box<dyn GroupAccumulator>);

impl InsertOnlyCall {
    /// Runs `f` on `batch` with its -U/-D rows filtered out and no row
    /// kinds (what an insert-only accumulator takes).
    fn accumulating<T>(
        batch: &BatchUpdate<'_>,
        f: impl FnOnce(&BatchUpdate<'_>) -> Result<T>,
    ) -> Result<T> {
        let Some(kinds) = batch.row_kinds else {
            return f(batch);
        };
        let keep: BooleanArray = kinds
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                Some(!is_retract(k) && batch.filter.is_none_or(|f| f.is_valid(i) && f.value(i)))
            })
            .collect();
        f(&BatchUpdate {
            filter: Some(&keep),
            row_kinds: None,
            ..*batch
        })
    }
}

impl GroupAccumulator for InsertOnlyCall {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn result_type(&self) -> DataType {
        self.0.result_type()
    }

    fn partial_types(&self) -> Vec<DataType> {
        self.0.partial_types()
    }

    fn state_types(&self) -> Vec<DataType> {
        self.0.state_types()
    }

    fn configure_call(&mut self, phase: crate::types::Phase, args: usize) {
        self.0.configure_call(phase, args);
    }

    fn num_groups(&self) -> usize {
        self.0.num_groups()
    }

    fn bytes_per_group(&self) -> usize {
        self.0.bytes_per_group()
    }

    fn bytes_per_input_row(&self) -> usize {
        self.0.bytes_per_input_row()
    }

    fn resize(&mut self, total_groups: usize) {
        self.0.resize(total_groups)
    }

    fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()> {
        Self::accumulating(batch, |b| self.0.update(b))
    }

    fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef> {
        Self::accumulating(batch, |b| self.0.update_traced(b, changed))
    }

    fn mark_changed(
        &self,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        self.0.mark_changed(before, after, changed)
    }

    fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
        self.0.merge(partials, group_ids)
    }

    fn load(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
        self.0.load(partials, group_ids)
    }

    fn start_view_log(&mut self) {
        self.0.start_view_log()
    }

    fn clear_view_log(&mut self) {
        self.0.clear_view_log()
    }

    fn view_changes(
        &self,
        groups: &[u32],
    ) -> Result<Option<crate::templates::distinct_view::ChangedEntries>> {
        self.0.view_changes(groups)
    }

    fn keeps_state_views(&self) -> bool {
        self.0.keeps_state_views()
    }

    fn state_partials(&self, groups: &[u32], whole: bool) -> Result<Vec<ArrayRef>> {
        self.0.state_partials(groups, whole)
    }

    fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef> {
        self.0.evaluate(groups)
    }

    fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.0.partials(groups)
    }

    fn result_partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.0.result_partials(groups)
    }

    fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.0.snapshot(groups)
    }

    fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        self.0.restore(state, groups)
    }

    fn clear(&mut self, groups: &[u32]) {
        self.0.clear(groups)
    }

    fn clear_results(&mut self, groups: &[u32]) {
        self.0.clear_results(groups)
    }

    fn reset(&mut self) {
        self.0.reset()
    }

    fn release_spare(&mut self) {
        self.0.release_spare()
    }

    /// The inner call's lowering, its -U/-D rows skipped.
    #[cfg(feature = "jit")]
    fn jit_lowering(&self) -> Option<crate::jit::Lowering> {
        let lowering = self.0.jit_lowering()?;
        Some(crate::jit::Lowering {
            retract: Some(crate::jit::skip_retraction),
            ..lowering
        })
    }

    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        self.0.jit_state()
    }

    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }

    fn refused_row(&self) -> Option<(usize, &'static str)> {
        self.0.refused_row()
    }

    fn failed_position(&self, groups: &[u32]) -> Option<(usize, &'static str)> {
        self.0.failed_position(groups)
    }

    fn new_distinct_view(&self, calls: usize) -> Option<ViewHandle> {
        self.0.new_distinct_view(calls)
    }

    fn join_distinct_view(&mut self, view: &ViewHandle, call: usize) -> bool {
        self.0.join_distinct_view(view, call)
    }

    fn distinct_pass(&mut self, batches: &[BatchUpdate<'_>]) -> Result<Vec<DistinctRows>> {
        self.0.distinct_pass(batches)
    }
}
