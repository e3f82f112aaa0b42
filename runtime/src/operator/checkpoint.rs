//! Snapshot and restore of the operator's state, one payload per Flink
//! key group, in the snapshot format.

use super::*;

impl GroupAggOperator {
    /// The state of every group with state, one payload per key group
    /// (ascending), in the snapshot format. The local phase keeps no state
    /// and returns nothing. Flush first: Flink finishes the bundle before
    /// a checkpoint barrier, so an open bundle is an error.
    pub fn snapshot(&self) -> Result<Vec<(u16, Vec<u8>)>> {
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
