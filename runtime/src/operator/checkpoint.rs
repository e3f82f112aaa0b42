//! Snapshot and restore of the operator's state, one payload per Flink
//! key group, in the snapshot format.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};

use super::GroupAggOperator;
use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::flink_key::key_group_for_hash;
use crate::plan::{AggCall, AggPlan};
use crate::snapshot::{decode_key_group, encode_key_group, ColumnRole, SnapshotMeta};
use crate::types::Phase;

/// What identifies the state layout of a plan: key types, and each
/// call's specialization and argument types. Budget, TTL, emission mode
/// and parallelism may change across a restore; this may not.
fn state_fingerprint(plan: &AggPlan, calls: &[AggCall], specializations: &[String]) -> String {
    let keys: Vec<String> = plan.key_types.iter().map(|t| t.to_string()).collect();
    let calls: Vec<String> = calls
        .iter()
        .zip(specializations)
        .map(|(c, s)| {
            let args: Vec<String> = c.arg_types.iter().map(|t| t.to_string()).collect();
            format!("{s}({})", args.join(", "))
        })
        .collect();
    format!("keys[{}] calls[{}]", keys.join(", "), calls.join("; "))
}

/// The state layout of an operator running `calls` with `accs` (the
/// plan's `visible` calls, then any inserted record counter): the schema of its snapshot batches
/// (`key_fields`, then each accumulator's state columns) and the metadata a
/// restore checks.
pub(super) fn state_layout(
    plan: &AggPlan,
    calls: &[AggCall],
    accs: &[Box<dyn GroupAccumulator>],
    visible: usize,
    specializations: &[String],
    key_fields: &[Field],
) -> (SchemaRef, SnapshotMeta) {
    let mut fields = key_fields.to_vec();
    let mut roles = vec![ColumnRole::Key; key_fields.len()];
    for (c, acc) in accs.iter().enumerate() {
        let types = acc.state_types();
        roles.extend(std::iter::repeat_n(
            ColumnRole::State { call: c as u16 },
            types.len(),
        ));
        for (j, t) in types.into_iter().enumerate() {
            fields.push(Field::new(format!("state{c}_{j}"), t, true));
        }
    }
    // The inserted record counter is part of the state layout.
    let mut layout = specializations.to_vec();
    layout.extend(accs[visible..].iter().map(|a| a.name().to_string()));
    let meta = SnapshotMeta {
        plan_fingerprint: state_fingerprint(plan, calls, &layout),
        max_parallelism: plan.max_parallelism,
        roles,
    };
    (Arc::new(Schema::new(fields)), meta)
}

impl GroupAggOperator {
    /// The state of every group with state, one payload per key group
    /// (ascending), in the snapshot format. The local phase keeps no state
    /// and returns nothing. Flush first: Flink finishes the bundle before
    /// a checkpoint barrier, so an open bundle is an error.
    pub fn snapshot(&self) -> Result<Vec<(u16, Vec<u8>)>> {
        self.check_not_failed()?;
        if self.has_open_bundle() {
            return Err(AggError::Snapshot(
                "the bundle is open; flush before taking a snapshot".into(),
            ));
        }
        if self.plan.phase == Phase::Local {
            return Ok(Vec::new());
        }
        let hashes = self.table.key_hashes();
        let mut by_group: Vec<(u16, u32)> = (0..self.live.len() as u32)
            .filter(|&g| self.live[g as usize])
            .map(|g| {
                let kg = key_group_for_hash(hashes[g as usize], self.plan.max_parallelism);
                (kg, g)
            })
            .collect();
        by_group.sort_unstable();
        let mut out = Vec::new();
        for chunk in by_group.chunk_by(|a, b| a.0 == b.0) {
            let kg = chunk[0].0;
            let groups: Vec<u32> = chunk.iter().map(|&(_, g)| g).collect();
            let mut columns = self.table.keys(&groups)?;
            for acc in &self.accs {
                columns.extend(acc.snapshot(&groups)?);
            }
            let batch = RecordBatch::try_new(self.state_schema.clone(), columns)?;
            out.push((kg, encode_key_group(&self.snapshot_meta, kg, &batch)?));
        }
        Ok(out)
    }

    /// Restores the given key groups' payloads (the caller passes the key
    /// groups of this subtask's range, so restoring at another parallelism
    /// works). Every group must belong to its payload's key group and be
    /// new to this operator; on any error nothing is restored.
    pub fn restore(&mut self, payloads: &[(u16, Vec<u8>)]) -> Result<()> {
        if self.plan.phase == Phase::Local {
            return if payloads.is_empty() {
                Ok(())
            } else {
                Err(AggError::Snapshot("the local phase keeps no state".into()))
            };
        }
        if self.has_open_bundle() {
            return Err(AggError::Snapshot(
                "the bundle is open; restore into a fresh operator".into(),
            ));
        }
        let mut batches = Vec::with_capacity(payloads.len());
        for (kg, bytes) in payloads {
            let decoded = decode_key_group(bytes)?;
            decoded.check_matches(&self.snapshot_meta)?;
            let (decoded_kg, batch) = (decoded.key_group, decoded.batch);
            if decoded_kg != *kg {
                return Err(AggError::Snapshot(format!(
                    "payload labelled key group {kg} holds key group {decoded_kg}"
                )));
            }
            let expected = self.state_schema.fields();
            let actual = batch.schema();
            if actual.fields().len() != expected.len()
                || actual
                    .fields()
                    .iter()
                    .zip(expected)
                    .any(|(a, e)| !a.data_type().equals_datatype(e.data_type()))
            {
                return Err(AggError::Snapshot(format!(
                    "key group {kg}: state columns {:?} do not match this plan's {:?}",
                    actual
                        .fields()
                        .iter()
                        .map(|f| f.data_type())
                        .collect::<Vec<_>>(),
                    expected.iter().map(|f| f.data_type()).collect::<Vec<_>>()
                )));
            }
            batches.push((*kg, batch));
        }
        let nkeys = self.plan.key_types.len();
        let before = self.table.len();
        let table_bytes = self.table.memory_bytes();
        let mut assigned = Vec::with_capacity(batches.len());
        let mut ids = Vec::new();
        for (kg, batch) in &batches {
            let keys = &batch.columns()[..nkeys];
            let start = self.table.len();
            if let Err(e) = self.table.intern(keys, batch.num_rows(), &mut ids) {
                self.table.truncate(before);
                return Err(AggError::Snapshot(format!("key group {kg}: {e}")));
            }
            let hashes = self.table.key_hashes();
            let mut fresh = ids
                .iter()
                .enumerate()
                .all(|(i, &g)| g as usize == start + i);
            fresh &= (start..self.table.len())
                .all(|g| key_group_for_hash(hashes[g], self.plan.max_parallelism) == *kg);
            if !fresh || ids.iter().any(|&g| (g as usize) < before) {
                self.table.truncate(before);
                return Err(AggError::Snapshot(format!(
                    "key group {kg}: keys are duplicated, already restored, or belong to another \
                     key group at max parallelism {}",
                    self.plan.max_parallelism
                )));
            }
            assigned.push(ids.clone());
        }
        let new_groups = self.table.len() - before;
        let var: Vec<Vec<ArrayRef>> = batches
            .iter()
            .map(|(_, b)| b.columns()[nkeys..].to_vec())
            .collect();
        let table_growth = self.table.memory_bytes().saturating_sub(table_bytes);
        let bytes = table_growth + self.growth_bound(new_groups, 0, &var);
        if let Err(e) = self.reserve(bytes, table_growth) {
            self.table.truncate(before);
            return Err(e);
        }
        self.grow_groups();
        for ((_, batch), ids) in batches.iter().zip(&assigned) {
            let mut col = nkeys;
            for acc in &mut self.accs {
                let width = acc.state_types().len();
                acc.restore(&batch.columns()[col..col + width], ids)?;
                col += width;
            }
            for &g in ids {
                self.live.set(g as usize);
            }
            self.touch(ids);
        }
        Ok(())
    }
}
