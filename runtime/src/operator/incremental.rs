//! The incremental aggregate of a split-distinct plan in mini-batch mode
//! (Flink's MiniBatchIncrementalGroupAggFunction): the partial level's
//! global phase fused with the final level's local phase.
//!
//! Per bundle, as Flink does:
//! - `addInput` merges each partial key's incoming partials on the heap
//!   (the global phase's bundle accumulators, [`GroupAggOperator::process_global`]);
//! - `finishBundle` groups the bundle's partial keys by final key (a fresh
//!   `HashMap` filled by `computeIfAbsent` in the bundle map's iteration
//!   order; each final key's `accMap` by `put`), and per final
//!   key resets the accumulators and merges each partial key's bundle
//!   accumulator in its `accMap`'s iteration order: a DISTINCT call
//!   through the partial key's view in state (Flink's state-backed view,
//!   `excludeAcc`), so only the values that entered (or left) the view
//!   reach the fresh accumulator; any other call merges its partial;
//! - it emits one `+I` row per final key: the final key and each call's
//!   partial (no view), what the final level's global phase merges.
//!
//! State is only the views, by partial key; the results are per bundle.
//! A DISTINCT call folds its new values per partial key and the final key
//! merges those results, which equals Flink's one fold over all of them
//! except where the fold depends on order; admission refuses those calls
//! (`plan::order_sensitive`).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int8Array, RecordBatch, UInt32Array};
use arrow_select::take::take;

use super::views::own_partials;
use super::GroupAggOperator;
use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::flink_key::{java_compute_if_absent_order, java_hash_map_order};
use crate::group_table::GroupTable;
use crate::plan::{AggCall, AggPlan};
use crate::types::RowKind;

/// The final level of an incremental aggregate, rebuilt every bundle.
#[derive(Debug)]
pub(super) struct FinalLevel {
    /// Positions of the final keys among the plan's keys.
    positions: Vec<usize>,
    /// This bundle's final keys.
    table: GroupTable,
    /// Per call, a fresh accumulator by final key: the call without
    /// DISTINCT, which merges what the call's state folded.
    accs: Vec<Box<dyn GroupAccumulator>>,
    ids: Vec<u32>,
}

impl FinalLevel {
    /// The final level of `plan` (an incremental plan) for the operator's
    /// `calls`, whose state accumulators are `state`.
    pub(super) fn new(
        plan: &AggPlan,
        calls: &[AggCall],
        state: &[Box<dyn GroupAccumulator>],
        in_view: &[bool],
    ) -> Result<Option<Self>> {
        let Some(positions) = plan.final_key.clone() else {
            return Ok(None);
        };
        let key_types: Vec<_> = positions.iter().map(|&p| plan.key_types[p]).collect();
        let mut accs = Vec::with_capacity(calls.len());
        for (c, call) in calls.iter().enumerate() {
            let plain = AggCall {
                distinct: false,
                filter: None,
                ..call.clone()
            };
            let admission = plan.lookup(&plain).map_err(|e| {
                AggError::Plan(format!("call {c} ({}): {}", call.function, e.reason))
            })?;
            let acc = admission.create_call(&call.arg_types, plan.phase)?;
            let folded = own_partials(state[c].partial_types(), in_view[c]);
            if acc.partial_types() != folded {
                return Err(AggError::Plan(format!(
                    "call {c} ({}): its DISTINCT results have partial types {folded:?}, but \
                     {} merges {:?}",
                    call.function,
                    acc.name(),
                    acc.partial_types()
                )));
            }
            accs.push(acc);
        }
        Ok(Some(FinalLevel {
            positions,
            table: GroupTable::new(&key_types)?,
            accs,
            ids: Vec::new(),
        }))
    }

    /// Positions among the plan's keys of the final keys.
    pub(super) fn positions(&self) -> &[usize] {
        &self.positions
    }

    /// Bytes held (the open bundle's final keys and results).
    pub(super) fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
            + self.accs.iter().map(|a| a.memory_bytes()).sum::<usize>()
            + self.ids.capacity() * 4
    }

    /// Interns the final keys of the bundle's partial keys (`keys`, in the
    /// bundle map's order, with Flink key hashes `partial_hashes`). Returns
    /// the final keys in the iteration order of Flink's `finalAggBuffer`,
    /// and the positions of the partial keys in merge order: each final
    /// key's in its `accMap`'s iteration order.
    fn group(&mut self, keys: &[ArrayRef], partial_hashes: &[i32]) -> Result<(Vec<u32>, Vec<u32>)> {
        let final_keys: Vec<ArrayRef> = self.positions.iter().map(|&p| keys[p].clone()).collect();
        let mut ids = std::mem::take(&mut self.ids);
        let interned = self
            .table
            .intern(&final_keys, partial_hashes.len(), &mut ids);
        self.ids = ids;
        interned?;
        // Flink calls `computeIfAbsent` once per partial key, in the bundle
        // map's order; ids are in order of first appearance.
        let final_order = java_compute_if_absent_order(&self.ids, self.table.key_hashes());
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); self.table.len()];
        for (pos, &f) in self.ids.iter().enumerate() {
            members[f as usize].push(pos as u32);
        }
        let mut merge_order = Vec::with_capacity(self.ids.len());
        for positions in members {
            let hashes: Vec<i32> = positions
                .iter()
                .map(|&p| partial_hashes[p as usize])
                .collect();
            merge_order.extend(
                java_hash_map_order(&hashes)
                    .into_iter()
                    .map(|i| positions[i as usize]),
            );
        }
        for acc in &mut self.accs {
            acc.resize(self.table.len());
        }
        Ok((final_order, merge_order))
    }

    fn clear(&mut self) {
        self.table.clear();
        for acc in &mut self.accs {
            acc.reset();
        }
    }

    /// Frees what the final accumulators' resets kept for reuse.
    pub(super) fn release_spare(&mut self) {
        for acc in &mut self.accs {
            acc.release_spare();
        }
    }
}

impl GroupAggOperator {
    /// Incremental flush: folds each bundle partial key's partials through
    /// its views in state, merges the results by final key and emits one
    /// `+I` row of partials per final key.
    pub(super) fn flush_incremental(&mut self) -> Result<Option<RecordBatch>> {
        if self.bundle.is_empty() {
            return Ok(None);
        }
        let mut finals = self
            .finals
            .take()
            .ok_or_else(|| AggError::Plan("not an incremental aggregate".into()))?;
        let result = self.fold_incremental(&mut finals);
        finals.clear();
        self.finals = Some(finals);
        for acc in &mut self.bundle_accs {
            acc.reset();
        }
        self.bundle.clear();
        result.map(Some)
    }

    fn fold_incremental(&mut self, finals: &mut FinalLevel) -> Result<RecordBatch> {
        let touched = self.bundle.touched.clone();
        let order = self.hash_map_order(&touched);
        let groups: Vec<u32> = order.iter().map(|&s| touched[s as usize]).collect();
        // Flink reads each partial key's views at finishBundle.
        self.expire(&groups);
        let keys = self.table.keys(&groups)?;
        let all_hashes = self.table.key_hashes();
        let hashes: Vec<i32> = groups.iter().map(|&g| all_hashes[g as usize]).collect();
        let (final_order, merge_order) = finals.group(&keys, &hashes)?;
        let merge_ids: Vec<u32> = merge_order
            .iter()
            .map(|&p| finals.ids[p as usize])
            .collect();
        let merge_rows = UInt32Array::from(merge_order);
        for c in 0..self.calls.len() {
            let bundle = self.bundle_accs[c].partials(&order)?;
            let folded = if self.in_view[c] {
                self.accs[c].merge(&bundle, &groups)?;
                let results = self.accs[c].result_partials(&groups)?;
                self.accs[c].clear_results(&groups);
                results
            } else {
                bundle
            };
            let ordered = folded
                .iter()
                .map(|column| take(column.as_ref(), &merge_rows, None))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            finals.accs[c].merge(&ordered, &merge_ids)?;
        }
        for &g in &groups {
            self.live.set(g as usize);
        }
        self.touch_live(&groups);
        let mut columns = finals.table.keys(&final_order)?;
        for acc in &finals.accs {
            columns.extend(acc.partials(&final_order)?);
        }
        let rows = final_order.len();
        columns.push(Arc::new(Int8Array::from(vec![RowKind::Insert as i8; rows])));
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}
