//! Finishing a bundle (Flink's `finishBundle`): the mini-batch
//! changelog, the local phase's partials and the global phase's merge, in
//! Flink's emission order.

use super::*;

impl GroupAggOperator {
    /// Flink's `finishBundle`: emits the open bundle's changelog (or, for
    /// the local phase, its partials) and starts a new bundle. Immediate
    /// mode has no bundle and returns `None`.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        match (self.plan.phase, self.plan.emission) {
            (Phase::Single, Emission::Immediate) => Ok(None),
            (Phase::Single, Emission::MiniBatch) => self.flush_bundled(),
            (Phase::Local, _) => self.flush_local(),
            (Phase::Global, _) => self.flush_global(),
        }
    }

    /// Bundle slots in the iteration order of Flink's bundle HashMap.
    fn hash_map_order(&mut self, groups: &[u32]) -> Vec<u32> {
        let all = self.table.key_hashes();
        let hashes: Vec<i32> = groups.iter().map(|&g| all[g as usize]).collect();
        let mut out = Vec::with_capacity(groups.len());
        self.order.iteration_order(&hashes, &mut out);
        out
    }

    fn flush_bundled(&mut self) -> Result<Option<RecordBatch>> {
        if self.bundle.is_empty() {
            return Ok(None);
        }
        let touched = self.bundle.touched.clone();
        let mut order = self.hash_map_order(&touched);
        if self.plan.input == InputMode::Retracting {
            let kept = self.cut_bundle(&order)?;
            order.truncate(kept);
        }
        let groups: Vec<u32> = order.iter().map(|&s| touched[s as usize]).collect();
        let after = self.evaluate_all(&groups)?;
        let counts = self.record_counts(&groups)?;
        let mut before = Vec::with_capacity(self.visible);
        for chunks in &self.bundle.prev {
            let parts: Vec<&dyn Array> = chunks.iter().map(|a| a.as_ref()).collect();
            before.push(concat(&parts)?);
        }
        // Positions (in flush order) of groups that had state, and their
        // pre-bundle results, compared under Flink's equaliser.
        let mut old_pos = Vec::new();
        let mut prev_idx = Vec::new();
        for (pos, &s) in order.iter().enumerate() {
            let p = self.bundle.prev_pos[s as usize];
            if p != NONE {
                old_pos.push(pos as u32);
                prev_idx.push(p);
            }
        }
        let changed = self.changed(&before, &prev_idx, &after, &old_pos)?;
        let mut log = Changelog::default();
        let mut k = 0;
        let mut emptied = Vec::new();
        for (pos, &s) in order.iter().enumerate() {
            let p = self.bundle.prev_pos[s as usize];
            if counts.as_ref().is_some_and(|c| c[pos] == 0) {
                // Record count zero: -D of the previous result (nothing for
                // a group without state before), and the state is cleared.
                if p != NONE {
                    log.push(RowKind::Delete, pos as u32, BEFORE, p as usize);
                    k += 1;
                }
                emptied.push(groups[pos]);
            } else if p == NONE {
                log.push(RowKind::Insert, pos as u32, AFTER, pos);
            } else {
                if changed[k] || self.plan.state_ttl_ms > 0 {
                    if self.plan.generate_update_before {
                        log.push(RowKind::UpdateBefore, pos as u32, BEFORE, p as usize);
                    }
                    log.push(RowKind::UpdateAfter, pos as u32, AFTER, pos);
                }
                k += 1;
            }
        }
        self.clear_groups(&emptied);
        self.touch_live(&groups);
        let keys = self.table.keys(&groups)?;
        let values: Vec<[ArrayRef; 2]> =
            before.into_iter().zip(after).map(|(b, a)| [b, a]).collect();
        let out = log.finish(&self.schema, &keys, &values)?;
        self.bundle.clear();
        Ok(Some(out))
    }

    fn flush_local(&mut self) -> Result<Option<RecordBatch>> {
        let n = self.table.len();
        if n == 0 {
            return Ok(None);
        }
        let groups: Vec<u32> = (0..n as u32).collect();
        let order = self.hash_map_order(&groups);
        let mut columns = self.table.keys(&order)?;
        for acc in &self.accs {
            columns.extend(acc.partials(&order)?);
        }
        columns.push(Arc::new(arrow_array::Int8Array::from(vec![
            RowKind::Insert
                as i8;
            n
        ])));
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

    fn flush_global(&mut self) -> Result<Option<RecordBatch>> {
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
        for (acc, p) in self.accs.iter_mut().zip(&partials) {
            acc.merge(p, &groups)?;
        }
        let after = self.evaluate_all(&groups)?;
        let counts = self.record_counts(&groups)?;
        let had_state: Vec<u32> = groups
            .iter()
            .enumerate()
            .filter(|(_, &g)| self.live[g as usize])
            .map(|(pos, _)| pos as u32)
            .collect();
        let changed = self.changed(&before, &had_state, &after, &had_state)?;
        let mut log = Changelog::default();
        let mut k = 0;
        let mut emptied = Vec::new();
        for (pos, &g) in groups.iter().enumerate() {
            if counts.as_ref().is_some_and(|c| c[pos] == 0) {
                if self.live[g as usize] {
                    log.push(RowKind::Delete, pos as u32, BEFORE, pos);
                    k += 1;
                }
                emptied.push(g);
            } else if !self.live[g as usize] {
                log.push(RowKind::Insert, pos as u32, AFTER, pos);
            } else {
                if changed[k] || self.plan.state_ttl_ms > 0 {
                    if self.plan.generate_update_before {
                        log.push(RowKind::UpdateBefore, pos as u32, BEFORE, pos);
                    }
                    log.push(RowKind::UpdateAfter, pos as u32, AFTER, pos);
                }
                k += 1;
            }
        }
        for &g in &groups {
            self.live.set(g as usize);
        }
        self.clear_groups(&emptied);
        self.touch_live(&groups);
        let keys = self.table.keys(&groups)?;
        let values: Vec<[ArrayRef; 2]> =
            before.into_iter().zip(after).map(|(b, a)| [b, a]).collect();
        let out = log.finish(&self.schema, &keys, &values)?;
        for acc in &mut self.bundle_accs {
            acc.reset();
        }
        self.bundle.clear();
        Ok(Some(out))
    }

    /// True when a bundle holds rows not yet flushed.
    pub fn has_open_bundle(&self) -> bool {
        match self.plan.phase {
            Phase::Local => !self.table.is_empty(),
            _ => !self.bundle.is_empty(),
        }
    }
}
