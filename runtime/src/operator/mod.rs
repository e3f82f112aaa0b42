//! The group-aggregate operators: single phase (immediate or mini-batch),
//! local and global, each producing exactly Flink's changelog.
//!
//! They reproduce Flink's GroupAggFunction (immediate), MiniBatchGroupAggFunction,
//! MiniBatchLocalGroupAggFunction and MiniBatchGlobalGroupAggFunction with
//! RecordCounter, over Arrow batches:
//!
//! - Input: the plan's key columns and argument columns by index, plus an
//!   optional Int8 `$row_kind` column (none means insert-only). The global
//!   phase reads key columns and partial columns.
//! - Output: key columns, one column per call (its result, or for the
//!   local phase its partial columns in Flink's accumulator layout), then
//!   `$row_kind`.
//! - [`GroupAggOperator::process`] returns the rows to emit now (immediate
//!   mode) or buffers the batch into the open bundle (mini-batch, local,
//!   global); [`GroupAggOperator::flush`] is Flink's `finishBundle`.
//!
//! Every public method either succeeds or leaves the operator's state as
//! it was (bad input, memory budget, snapshot errors).

mod budget;
mod bundle;
mod changelog;
mod checkpoint;
mod flush;
mod input;
mod live;
mod retract;
mod stats;
mod ttl;

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::concat::concat;
use arrow_select::take::take;

use crate::accumulator::{BatchUpdate, GroupAccumulator};
use crate::error::{AggError, Result};
use crate::flink_key::{key_group_for_hash, JavaHashMapOrder};
use crate::group_table::GroupTable;
use crate::memory::MemoryBudget;
use crate::plan::{admit, arrow_type, Admitted, AggCall, AggPlan, Emission};
use crate::registry::Admission;
use crate::snapshot::{decode_key_group, encode_key_group, ColumnRole, SnapshotMeta};
use crate::types::{InputMode, Phase, RowKind, ROW_KIND_COLUMN};

use bundle::{Bundle, NONE};
use changelog::{Changelog, AFTER, BEFORE};
use live::LiveGroups;
use retract::retracting_rows;
pub use stats::OperatorStats;

/// One group-aggregate operator instance (one Flink subtask).
#[derive(Debug)]
pub struct GroupAggOperator {
    plan: AggPlan,
    /// The plan's calls, plus over retracting input without a COUNT(*)
    /// the record-counting COUNT(*) Flink's planner inserts (last, hidden
    /// from results, in the local phase's partials).
    calls: Vec<AggCall>,
    /// Number of calls whose results are output (the plan's calls).
    visible: usize,
    /// Over retracting input: the call whose count is the record count.
    counter: Option<usize>,
    specializations: Vec<String>,
    table: GroupTable,
    /// State accumulators (single, global) or bundle accumulators (local).
    accs: Vec<Box<dyn GroupAccumulator>>,
    /// Global phase: per-bundle accumulators indexed by bundle slot.
    bundle_accs: Vec<Box<dyn GroupAccumulator>>,
    /// By group id: whether the group has state (Flink's accState != null).
    live: LiveGroups,
    bundle: Bundle,
    order: JavaHashMapOrder,
    budget: MemoryBudget,
    key_arrow: Vec<DataType>,
    input_arrow: Vec<Vec<DataType>>,
    schema: SchemaRef,
    state_schema: SchemaRef,
    snapshot_meta: SnapshotMeta,
    ids: Vec<u32>,
    /// By group id, scratch for immediate mode: the last row of the group
    /// in the current batch.
    last_row: Vec<u32>,
    /// State TTL: the clock and each group's last write.
    retention: ttl::Retention,
}

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

/// The calls an operator runs and the record-counting one: over
/// retracting input Flink counts records with the first COUNT(*), or
/// inserts one after the other calls.
fn effective_calls(plan: &AggPlan) -> Result<(Vec<AggCall>, Option<usize>)> {
    let mut calls = plan.calls.clone();
    if plan.input != InputMode::Retracting {
        return Ok((calls, None));
    }
    if let Some(i) = plan.record_counter() {
        return Ok((calls, Some(i)));
    }
    let args = match plan.phase {
        Phase::Global => vec![plan.count_star_column.ok_or_else(|| {
            AggError::Plan(
                "a global phase over retracting input needs count_star_column, the COUNT(*) \
                 partial that counts records"
                    .into(),
            )
        })?],
        _ => Vec::new(),
    };
    calls.push(AggCall {
        function: "COUNT_STAR".into(),
        args,
        arg_types: Vec::new(),
        distinct: false,
        filter: None,
        result_type: None,
    });
    let counter = calls.len() - 1;
    Ok((calls, Some(counter)))
}

/// The registry rows of the calls an operator runs: the admitted ones, then
/// the inserted record counter's (looked up here, the only call admission
/// did not see).
fn call_admissions(
    plan: &AggPlan,
    admitted: &Admitted,
    calls: &[AggCall],
) -> Result<Vec<&'static Admission>> {
    let mut admissions = admitted.admissions.clone();
    for call in &calls[admissions.len()..] {
        admissions.push(plan.lookup(call).map_err(|e| AggError::Plan(e.reason))?);
    }
    Ok(admissions)
}

/// One accumulator per call, from its registry row.
fn create_accumulators(
    admissions: &[&'static Admission],
    calls: &[AggCall],
) -> Result<Vec<Box<dyn GroupAccumulator>>> {
    admissions
        .iter()
        .zip(calls)
        .map(|(admission, call)| admission.create(call.arg_types.first()))
        .collect()
}

/// Each call's `[before, after]` value sources for a changelog; an empty
/// `before` (no group had state) becomes an empty slice of `after`'s type.
fn before_after(before: Vec<ArrayRef>, after: Vec<ArrayRef>) -> Vec<[ArrayRef; 2]> {
    before
        .into_iter()
        .zip(after)
        .map(|(b, a)| {
            let b = if b.is_empty() { a.slice(0, 0) } else { b };
            [b, a]
        })
        .collect()
}

/// Whether an Arrow type's values live on the heap (state can grow with
/// their bytes).
fn is_var_len(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
    )
}

impl GroupAggOperator {
    /// An operator for an admitted plan, with an empty state.
    pub fn new(plan: AggPlan) -> Result<Self> {
        plan.validate()?;
        let admitted = admit(&plan).map_err(|e| AggError::Plan(e.reason))?;
        let (calls, counter) = effective_calls(&plan)?;
        let visible = plan.calls.len();
        let admissions = call_admissions(&plan, &admitted, &calls)?;
        let accs = create_accumulators(&admissions, &calls)?;
        let bundle_accs = if plan.phase == Phase::Global {
            create_accumulators(&admissions, &calls)?
        } else {
            Vec::new()
        };
        let key_arrow: Vec<DataType> = plan.key_types.iter().map(arrow_type).collect();
        let input_arrow: Vec<Vec<DataType>> = match plan.phase {
            Phase::Global => accs.iter().map(|a| a.partial_types()).collect(),
            _ => calls
                .iter()
                .map(|c| c.arg_types.iter().map(arrow_type).collect())
                .collect(),
        };
        for (i, (call, types)) in calls.iter().zip(&input_arrow).enumerate() {
            if call.args.len() != types.len() {
                return Err(AggError::Plan(format!(
                    "call {i} ({}) lists {} input columns but needs {}",
                    call.function,
                    call.args.len(),
                    types.len()
                )));
            }
        }
        let mut fields: Vec<Field> = key_arrow
            .iter()
            .enumerate()
            .map(|(i, t)| Field::new(format!("key{i}"), t.clone(), true))
            .collect();
        let mut state_fields = fields.clone();
        for (c, acc) in accs.iter().enumerate() {
            if plan.phase == Phase::Local {
                for (j, t) in acc.partial_types().into_iter().enumerate() {
                    fields.push(Field::new(format!("agg{c}_{j}"), t, true));
                }
            } else if c < visible {
                fields.push(Field::new(format!("agg{c}"), acc.result_type(), true));
            }
            for (j, t) in acc.state_types().into_iter().enumerate() {
                state_fields.push(Field::new(format!("state{c}_{j}"), t, true));
            }
        }
        fields.push(Field::new(ROW_KIND_COLUMN, DataType::Int8, false));
        let mut roles = vec![ColumnRole::Key; key_arrow.len()];
        for (c, acc) in accs.iter().enumerate() {
            roles.extend(std::iter::repeat_n(
                ColumnRole::State { call: c as u16 },
                acc.state_types().len(),
            ));
        }
        // The inserted record counter is part of the state layout.
        let mut layout = admitted.specializations.clone();
        layout.extend(accs[visible..].iter().map(|a| a.name().to_string()));
        let snapshot_meta = SnapshotMeta {
            plan_fingerprint: state_fingerprint(&plan, &calls, &layout),
            max_parallelism: plan.max_parallelism,
            roles,
        };
        Ok(GroupAggOperator {
            table: GroupTable::new(&plan.key_types)?,
            budget: MemoryBudget::new(plan.memory_budget_bytes),
            specializations: admitted.specializations,
            accs,
            bundle_accs,
            live: LiveGroups::default(),
            bundle: Bundle::new(visible, calls.len()),
            order: JavaHashMapOrder::default(),
            key_arrow,
            input_arrow,
            schema: Arc::new(Schema::new(fields)),
            state_schema: Arc::new(Schema::new(state_fields)),
            snapshot_meta,
            ids: Vec::new(),
            last_row: Vec::new(),
            retention: ttl::Retention::default(),
            plan,
            calls,
            visible,
            counter,
        })
    }

    /// The plan the operator runs.
    pub fn plan(&self) -> &AggPlan {
        &self.plan
    }

    /// The specialization chosen for each call.
    pub fn specializations(&self) -> &[String] {
        &self.specializations
    }

    /// Schema of the batches [`process`](Self::process) and
    /// [`flush`](Self::flush) return.
    pub fn output_schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn measure(&self) -> usize {
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
    }

    /// Reserves `bytes`; when the running account says no, re-measures
    /// (the account over-estimates string state) and tries once more.
    /// `pending` is the part of `bytes` already allocated (table growth
    /// of the batch being reserved for), which the measurement excludes.
    fn reserve(&mut self, bytes: usize, pending: usize) -> Result<()> {
        if self.budget.try_reserve(bytes).is_ok() {
            return Ok(());
        }
        let measured = self.measure().saturating_sub(pending);
        self.budget.set_used(measured);
        self.budget.try_reserve(bytes)
    }

    /// An upper bound of the bytes state grows by when `new_groups` groups
    /// are added and `input` is folded in, beyond the table's own growth.
    fn growth_bound(&self, new_groups: usize, new_slots: usize, input: &[Vec<ArrayRef>]) -> usize {
        let per_group = self.bytes_per_new_group();
        let per_slot = self.bytes_per_new_slot();
        let var_bytes: usize = input
            .iter()
            .flatten()
            .filter(|c| is_var_len(c.data_type()))
            .map(|c| c.get_buffer_memory_size())
            .sum();
        let factor = if self.bundle_accs.is_empty() { 1 } else { 2 };
        let rows = input.first().and_then(|c| c.first()).map_or(0, |c| c.len());
        let per_row: usize = self.accs.iter().map(|a| a.bytes_per_input_row()).sum();
        new_groups * per_group + new_slots * per_slot + var_bytes * factor + rows * per_row
    }

    /// Processes one input batch. Immediate mode returns the changelog
    /// rows it causes; the bundled modes buffer and return `None`.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        let input = input::read(
            batch,
            &self.plan.key_columns,
            &self.key_arrow,
            &self
                .calls
                .iter()
                .map(|c| c.args.clone())
                .collect::<Vec<_>>(),
            &self.input_arrow,
            self.plan.input,
        )?;
        if input.num_rows == 0 {
            return Ok(None);
        }
        match (self.plan.phase, self.plan.emission) {
            (Phase::Single, Emission::Immediate) => match retracting_rows(&input) {
                Some(kinds) => self.process_immediate_retracting(&input, kinds).map(Some),
                None => self.process_immediate(&input).map(Some),
            },
            (Phase::Single, Emission::MiniBatch) => self.process_bundled(&input).map(|_| None),
            (Phase::Local, _) => self.process_local(&input).map(|_| None),
            (Phase::Global, _) => self.process_global(&input).map(|_| None),
        }
    }

    /// Interns the batch's keys; on error the table is unchanged. Returns
    /// the group count before.
    fn intern(&mut self, input: &input::Input<'_>) -> Result<usize> {
        let before = self.table.len();
        let mut ids = std::mem::take(&mut self.ids);
        let result = self.table.intern(&input.keys, input.num_rows, &mut ids);
        self.ids = ids;
        result.map(|_| before)
    }

    /// Reserves memory for the batch after interning, undoing the intern
    /// when the budget says no.
    /// `extra` bytes are reserved on top; `allocated` of them are already
    /// allocated (scratch grown for this batch).
    fn reserve_after_intern(
        &mut self,
        groups_before: usize,
        table_bytes_before: usize,
        new_slots: usize,
        (extra, allocated): (usize, usize),
        input: &input::Input<'_>,
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

    /// Drops the groups an intern added, and the scratch grown for them.
    fn undo_intern(&mut self, groups_before: usize) {
        self.table.truncate(groups_before);
        if self.last_row.len() > groups_before {
            self.last_row.truncate(groups_before);
            self.last_row.shrink_to_fit();
        }
    }

    fn grow_groups(&mut self) {
        let n = self.table.len();
        for acc in &mut self.accs {
            acc.resize(n);
        }
        self.live.resize(n);
        self.bundle.grow(n);
    }

    /// Single phase, immediate: Flink's GroupAggFunction per row.
    fn process_immediate(&mut self, input: &input::Input<'_>) -> Result<RecordBatch> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        self.expire_batch_groups();
        let rows = input.num_rows;
        let n = self.table.len();
        let scratch_before = self.last_row.capacity();
        self.last_row.resize(n, NONE);
        let scratch_growth = (self.last_row.capacity() - scratch_before) * 4;
        // Per row: where its previous result comes from. The first row of a
        // group in this batch reads the pre-batch result (BEFORE source, by
        // position in `first_live`), later rows the traced result of the
        // group's previous row (AFTER source).
        let mut prev_src: Vec<(usize, usize)> = Vec::with_capacity(rows);
        let mut first_live: Vec<u32> = Vec::new();
        let mut is_insert: Vec<bool> = Vec::with_capacity(rows);
        for (row, &g) in self.ids.iter().enumerate() {
            let gi = g as usize;
            let last = self.last_row[gi];
            if last == NONE {
                let had_state = gi < before && self.live[gi];
                if had_state {
                    prev_src.push((BEFORE, first_live.len()));
                    first_live.push(g);
                } else {
                    prev_src.push((BEFORE, 0));
                }
                is_insert.push(!had_state);
            } else {
                prev_src.push((AFTER, last as usize));
                is_insert.push(false);
            }
            self.last_row[gi] = row as u32;
        }
        for &g in &self.ids {
            self.last_row[g as usize] = NONE;
        }
        let prev = match self.evaluate_all(&first_live) {
            Ok(prev) => prev,
            Err(e) => {
                self.undo_intern(before);
                return Err(e);
            }
        };
        let prev_bytes: usize = prev.iter().map(|a| a.get_array_memory_size()).sum();
        self.reserve_after_intern(
            before,
            table_bytes,
            0,
            (prev_bytes + scratch_growth, scratch_growth),
            input,
        )?;
        self.grow_groups();

        let mut changed = vec![false; rows];
        let ids = std::mem::take(&mut self.ids);
        let traced = self.traced_update(&input.args, &ids, None, input.row_kinds, &mut changed);
        self.ids = ids;
        let traced = traced?;
        for &g in &self.ids {
            self.live.set(g as usize);
        }
        let ids = std::mem::take(&mut self.ids);
        self.touch(&ids);
        self.ids = ids;
        self.budget.release(prev_bytes);

        let emit_unchanged = self.plan.state_ttl_ms > 0;
        let mut log = Changelog::default();
        for row in 0..rows {
            if is_insert[row] {
                log.push(RowKind::Insert, row as u32, AFTER, row);
            } else if changed[row] || emit_unchanged {
                if self.plan.generate_update_before {
                    let (src, idx) = prev_src[row];
                    log.push(RowKind::UpdateBefore, row as u32, src, idx);
                }
                log.push(RowKind::UpdateAfter, row as u32, AFTER, row);
            }
        }
        log.finish(&self.schema, &input.keys, &before_after(prev, traced))
    }

    /// Folds rows into every call: the output calls traced (each row's
    /// result after it, `changed` set as it changes), the inserted record
    /// counter plainly.
    fn traced_update(
        &mut self,
        args: &[Vec<ArrayRef>],
        group_ids: &[u32],
        filter: Option<&arrow_array::BooleanArray>,
        row_kinds: Option<&[i8]>,
        changed: &mut [bool],
    ) -> Result<Vec<ArrayRef>> {
        let mut traced = Vec::with_capacity(self.visible);
        for (c, (acc, args)) in self.accs.iter_mut().zip(args).enumerate() {
            let update = BatchUpdate {
                args,
                group_ids,
                filter,
                row_kinds,
            };
            if c < self.visible {
                traced.push(acc.update_traced(&update, changed)?);
            } else {
                acc.update(&update)?;
            }
        }
        Ok(traced)
    }

    /// The output calls' results for the listed groups.
    fn evaluate_all(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.accs[..self.visible]
            .iter()
            .map(|a| a.evaluate(groups))
            .collect()
    }

    /// Adds this batch's newly touched groups to the bundle; returns them.
    fn new_slots(&self) -> Vec<u32> {
        let mut fresh = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for &g in &self.ids {
            let gi = g as usize;
            let untouched = gi >= self.bundle.slot_of.len() || self.bundle.slot_of[gi] == NONE;
            if untouched && seen.insert(g) {
                fresh.push(g);
            }
        }
        fresh
    }

    /// Single phase, mini-batch: rows are applied to state now; the
    /// result each group had before the bundle is kept for `flush`.
    fn process_bundled(&mut self, input: &input::Input<'_>) -> Result<()> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        let fresh = self.new_slots();
        // State is read when a group enters the bundle.
        self.expire(&fresh);
        let first_live: Vec<u32> = fresh
            .iter()
            .copied()
            .filter(|&g| (g as usize) < before && self.live[g as usize])
            .collect();
        // Pre-bundle results, and over retracting input the pre-bundle
        // state too (for the rollback of `cut_bundle`).
        let retracting = self.plan.input == InputMode::Retracting;
        let kept = self.evaluate_all(&first_live).and_then(|prev| {
            let saved = if retracting {
                self.snapshot_for_rollback(&first_live)?
            } else {
                Vec::new()
            };
            Ok((prev, saved))
        });
        let (prev, saved) = match kept {
            Ok(kept) => kept,
            Err(e) => {
                self.undo_intern(before);
                return Err(e);
            }
        };
        let prev_bytes: usize = prev
            .iter()
            .chain(saved.iter().flatten())
            .map(|a| a.get_array_memory_size())
            .sum();
        self.reserve_after_intern(before, table_bytes, fresh.len(), (prev_bytes, 0), input)?;
        self.grow_groups();
        for &g in &fresh {
            let gi = g as usize;
            self.bundle.slot_of[gi] = self.bundle.touched.len() as u32;
            self.bundle.touched.push(g);
            let had_state = gi < before && self.live[gi];
            if had_state {
                self.bundle.prev_pos.push(self.bundle.prev_len as u32);
                self.bundle.prev_len += 1;
            } else {
                self.bundle.prev_pos.push(NONE);
            }
        }
        for (chunks, p) in self.bundle.prev.iter_mut().zip(prev) {
            chunks.push(p);
        }
        if retracting {
            for (chunks, columns) in self.bundle.saved.iter_mut().zip(saved) {
                chunks.push(columns);
            }
            return self.fold_accepted(input);
        }
        self.fold_rows(input)
    }

    /// Folds a batch's rows into every call's accumulator at the interned
    /// group ids and marks those groups live.
    fn fold_rows(&mut self, input: &input::Input<'_>) -> Result<()> {
        for (acc, args) in self.accs.iter_mut().zip(&input.args) {
            acc.update(&BatchUpdate {
                args,
                group_ids: &self.ids,
                filter: None,
                row_kinds: input.row_kinds,
            })?;
        }
        for &g in &self.ids {
            self.live.set(g as usize);
        }
        Ok(())
    }

    /// Local phase: rows go into fresh per-bundle accumulators, indexed by
    /// the bundle table's ids (first-touch order).
    fn process_local(&mut self, input: &input::Input<'_>) -> Result<()> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        self.reserve_after_intern(before, table_bytes, 0, (0, 0), input)?;
        self.grow_groups();
        self.fold_rows(input)
    }

    /// Global phase: partial rows are merged into per-bundle accumulators
    /// (Flink's `localAgg.merge` in `addInput`); state is touched at flush.
    fn process_global(&mut self, input: &input::Input<'_>) -> Result<()> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        let fresh = self.new_slots();
        self.reserve_after_intern(before, table_bytes, fresh.len(), (0, 0), input)?;
        self.grow_groups();
        for &g in &fresh {
            self.bundle.slot_of[g as usize] = self.bundle.touched.len() as u32;
            self.bundle.touched.push(g);
        }
        let slots = self.bundle.touched.len();
        let slot_ids: Vec<u32> = self
            .ids
            .iter()
            .map(|&g| self.bundle.slot_of[g as usize])
            .collect();
        for (acc, partials) in self.bundle_accs.iter_mut().zip(&input.args) {
            acc.resize(slots);
            acc.merge(partials, &slot_ids)?;
        }
        Ok(())
    }

    /// Records a state write for those of `groups` that hold state.
    fn touch_live(&mut self, groups: &[u32]) {
        let kept: Vec<u32> = groups
            .iter()
            .copied()
            .filter(|&g| self.live[g as usize])
            .collect();
        self.touch(&kept);
    }

    /// Clears the current batch's groups whose state expired.
    fn expire_batch_groups(&mut self) {
        let ids = std::mem::take(&mut self.ids);
        self.expire(&ids);
        self.ids = ids;
    }

    /// Flags, per compared pair, whether any call's result changed:
    /// `before[c][prev_idx[i]]` against `after[c][new_pos[i]]`.
    fn changed(
        &self,
        before: &[ArrayRef],
        prev_idx: &[u32],
        after: &[ArrayRef],
        new_pos: &[u32],
    ) -> Result<Vec<bool>> {
        let mut changed = vec![false; prev_idx.len()];
        if prev_idx.is_empty() {
            return Ok(changed);
        }
        let prev_idx = UInt32Array::from(prev_idx.to_vec());
        let new_pos = UInt32Array::from(new_pos.to_vec());
        for (c, acc) in self.accs[..self.visible].iter().enumerate() {
            let b = take(before[c].as_ref(), &prev_idx, None)?;
            let a = take(after[c].as_ref(), &new_pos, None)?;
            acc.mark_changed(&b, &a, &mut changed)?;
        }
        Ok(changed)
    }
}
