//! Firing windows (Flink's `fireWindow` and `clearWindow` of the slicing
//! processors) and the local phase's flush.
//!
//! A due window end fires for all its pending groups at once: TUMBLE reads
//! the slice; HOP merges its slices newest first into a scratch slot;
//! CUMULATE folds the step's slice into the period's first slice (its
//! running accumulator) and reads that. A window whose record count is 0
//! is not emitted. HOP chains the next window after a non-empty one,
//! CUMULATE every next step of the period; then the expired slices are
//! cleared. Chained windows that are due fire in the same pass.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, TimestampMillisecondArray};
use arrow_array::{ArrayRef, BooleanArray, Int64Array, Int8Array, RecordBatch};
use arrow_select::concat::concat_batches;
use arrow_select::filter::filter_record_batch;

use super::slots::GroupRefs;
use super::{WindowAggOperator, WindowProperty};
use crate::error::Result;
use crate::operator::views;
use crate::window::WindowSpec;

impl WindowAggOperator {
    /// Fires every due window in end order; `None` when nothing is emitted.
    pub(super) fn fire_due(&mut self) -> Result<Option<RecordBatch>> {
        let Some(spec) = self.spec else {
            return self.fire_sessions();
        };
        let watermark = self.watermark;
        let mut out = Vec::new();
        while let Some((end, groups)) = self
            .timers
            .pop_due(|end| self.window.is_fired(end, watermark))
        {
            if let Some(batch) = self.fire(spec, end, &groups)? {
                out.push(batch);
            }
            for &g in &groups {
                self.refs.drop(g);
            }
        }
        self.compact_if_sparse()?;
        self.concat(out)
    }

    /// The batches as one (`None` when there are none).
    pub(super) fn concat(&self, mut batches: Vec<RecordBatch>) -> Result<Option<RecordBatch>> {
        match batches.len() {
            0 => Ok(None),
            1 => Ok(batches.pop()),
            _ => Ok(Some(concat_batches(&self.schema, &batches)?)),
        }
    }

    /// Fires the window ending at `end` for `groups`.
    fn fire(&mut self, spec: WindowSpec, end: i64, groups: &[u32]) -> Result<Option<RecordBatch>> {
        let mut scratch = Vec::new();
        let results: Vec<u32> = match spec {
            WindowSpec::Tumble { .. } | WindowSpec::Windowed { .. } => groups
                .iter()
                .map(|&g| self.slot_or_scratch(g, end, &mut scratch))
                .collect(),
            WindowSpec::Hop { .. } => {
                let slices = spec.slices_of(end);
                let mut sources = Vec::new();
                let mut targets = Vec::new();
                let mut results = Vec::with_capacity(groups.len());
                for &g in groups {
                    let target = self.slots.scratch();
                    scratch.push(target);
                    results.push(target);
                    for &s in &slices {
                        if let Some(slot) = self.slots.get(g, s) {
                            sources.push(slot);
                            targets.push(target);
                        }
                    }
                }
                self.merge_slots(&sources, &targets)?;
                results
            }
            WindowSpec::Cumulate { .. } => {
                let first = spec.slices_of(end)[0];
                let mut sources = Vec::new();
                let mut targets = Vec::new();
                let mut results = Vec::with_capacity(groups.len());
                for &g in groups {
                    let (target, created) = self.slots.get_or_insert(g, first);
                    if created {
                        self.refs.add(g);
                    }
                    results.push(target);
                    if end != first {
                        if let Some(slot) = self.slots.get(g, end) {
                            sources.push(slot);
                            targets.push(target);
                        }
                    }
                }
                self.merge_slots(&sources, &targets)?;
                results
            }
        };
        let emitted = self.non_empty(&results)?;
        let n = groups.len();
        let bounds = (vec![spec.window_start(end); n], vec![end; n]);
        let batch = self.window_rows(groups, &results, &bounds, &emitted)?;
        for (&g, &nonempty) in groups.iter().zip(&emitted) {
            if let Some(next) = next_window(spec, end, nonempty) {
                if self.timers.register(g, next) {
                    self.refs.add(g);
                }
            }
        }
        let expired = spec.expired_slices(end);
        for &g in groups {
            for &s in &expired {
                if let Some(slot) = self.slots.get(g, s) {
                    self.free_slot(slot);
                }
            }
        }
        for slot in scratch {
            self.free_slot(slot);
        }
        Ok(batch)
    }

    /// `group`'s slot of `slice`, or an empty scratch slot (pushed to
    /// `scratch`) when the slice has no state.
    fn slot_or_scratch(&mut self, group: u32, slice: i64, scratch: &mut Vec<u32>) -> u32 {
        self.slots.get(group, slice).unwrap_or_else(|| {
            let slot = self.slots.scratch();
            scratch.push(slot);
            slot
        })
    }

    /// Merges slot `sources[i]` into slot `targets[i]`, in order, for every
    /// call.
    pub(super) fn merge_slots(&mut self, sources: &[u32], targets: &[u32]) -> Result<()> {
        let capacity = self.slots.capacity();
        for acc in &mut self.accs {
            acc.resize(capacity);
        }
        if sources.is_empty() {
            return Ok(());
        }
        for acc in &mut self.accs {
            let partials = acc.partials(sources)?;
            acc.merge(&partials, targets)?;
        }
        Ok(())
    }

    /// Clears a slot's accumulators and frees it.
    pub(super) fn free_slot(&mut self, slot: u32) {
        for acc in &mut self.accs {
            acc.clear(&[slot]);
        }
        if let Some(g) = self.slots.release(slot) {
            self.refs.drop(g);
        }
    }

    /// Whether each result slot is emitted: its record count is not 0 (Flink
    /// emits a negative count), or always when records are not counted.
    pub(super) fn non_empty(&self, results: &[u32]) -> Result<Vec<bool>> {
        let Some(counter) = self.counter else {
            return Ok(vec![true; results.len()]);
        };
        let counts = self.accs[counter].evaluate(results)?;
        let counts = counts.as_primitive::<Int64Type>();
        Ok((0..results.len())
            .map(|i| counts.is_null(i) || counts.value(i) != 0)
            .collect())
    }

    /// The `+I` rows of windows: keys, results, window columns, for
    /// `groups[i]`'s window `[bounds.0[i], bounds.1[i])` held in slot
    /// `results[i]`; the rows `emitted` says no are left out.
    pub(super) fn window_rows(
        &self,
        groups: &[u32],
        results: &[u32],
        bounds: &(Vec<i64>, Vec<i64>),
        emitted: &[bool],
    ) -> Result<Option<RecordBatch>> {
        if !emitted.iter().any(|&e| e) {
            return Ok(None);
        }
        let n = groups.len();
        let mut columns = self.table.keys(groups)?;
        for acc in &self.accs[..self.visible] {
            columns.push(acc.evaluate(results)?);
        }
        let (starts, ends) = bounds;
        for p in &self.window.properties {
            let values: TimestampMillisecondArray = match p {
                WindowProperty::WindowStart => starts.clone().into(),
                WindowProperty::WindowEnd => ends.clone().into(),
                WindowProperty::WindowTime => ends
                    .iter()
                    .map(|&e| self.window.window_time(e))
                    .collect::<Vec<_>>()
                    .into(),
                WindowProperty::ProcessingTime => TimestampMillisecondArray::new_null(n),
            };
            columns.push(Arc::new(values) as ArrayRef);
        }
        columns.push(Arc::new(Int8Array::from(vec![0i8; n])));
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        if emitted.iter().all(|&e| e) {
            return Ok(Some(batch));
        }
        Ok(Some(filter_record_batch(
            &batch,
            &BooleanArray::from(emitted.to_vec()),
        )?))
    }

    /// The local phase's flush: one partial row per group and slice (in
    /// slot order), then an empty operator.
    pub(super) fn flush_local(&mut self) -> Result<Option<RecordBatch>> {
        if self.slots.len() == 0 {
            return Ok(None);
        }
        let mut rows: Vec<(u32, i64, u32)> = self.slots.iter().collect();
        rows.sort_unstable_by_key(|&(_, _, slot)| slot);
        let groups: Vec<u32> = rows.iter().map(|r| r.0).collect();
        let slots: Vec<u32> = rows.iter().map(|r| r.2).collect();
        let mut columns = self.table.keys(&groups)?;
        let (partials, view_columns) =
            views::partials_with_views(&self.plan, &self.views, &self.accs, &self.in_view, &slots)?;
        columns.extend(partials);
        columns.extend(view_columns);
        columns.push(Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.1),
        )));
        columns.push(Arc::new(Int8Array::from(vec![0i8; rows.len()])));
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        self.table.clear();
        self.slots.clear();
        self.refs = GroupRefs::default();
        self.min_slice = None;
        for acc in &mut self.accs {
            acc.reset();
        }
        self.budget.set_used(0);
        Ok(Some(batch))
    }
}

/// The window Flink registers after firing the window ending at `end`:
/// HOP the next one after a non-empty window, CUMULATE the next step of
/// the period.
fn next_window(spec: WindowSpec, end: i64, non_empty: bool) -> Option<i64> {
    match spec {
        WindowSpec::Tumble { .. } | WindowSpec::Windowed { .. } => None,
        WindowSpec::Hop { slide, .. } => non_empty.then(|| end.wrapping_add(slide)),
        WindowSpec::Cumulate { max_size, step, .. } => {
            let next = end.wrapping_add(step);
            let period_end = spec.window_start(end).wrapping_add(max_size);
            (next <= period_end).then_some(next)
        }
    }
}
