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
//!
//! This file holds the operator's shared core (construction, the group
//! table, accumulators); each mode has its own file (`immediate`,
//! `minibatch`, `two_phase`) and all of them emit through
//! `changelog::emit`. The memory budget is in `budget`, snapshots in
//! `checkpoint`, state TTL in `ttl`, record counting in `retract`.

mod budget;
mod bundle;
mod cache;
mod changelog;
mod checkpoint;
mod flink_state;
mod flink_views;
mod fusion;
mod immediate;
mod incremental;
pub(crate) mod input;
mod insert_only_call;
mod live;
mod minibatch;
mod retract;
mod shared_views;
mod stats;
mod ttl;
mod two_phase;
mod view_order;
pub(crate) mod views;
mod written_keys;

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::accumulator::GroupAccumulator;
use crate::error::{AggError, Result};
use crate::flink_key::JavaHashMapOrder;
use crate::group_table::GroupTable;
use crate::memory::MemoryBudget;
use crate::plan::{admit, arrow_type, Admitted, AggCall, AggPlan, Emission};
use crate::registry::Admission;
use crate::snapshot::SnapshotMeta;
use crate::types::{InputMode, Phase, ROW_KIND_COLUMN};

use bundle::{Bundle, NONE};
pub use flink_state::FlinkField;
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
    /// Two-phase DISTINCT: each view's layout (in the plan's order).
    views: Vec<views::ViewLayout>,
    /// By call: whether its partial ends in its DISTINCT view's list, which
    /// travels in a shared view column instead (two-phase DISTINCT calls).
    in_view: Vec<bool>,
    /// The groups of DISTINCT calls folding through one shared view.
    shared: Vec<Vec<usize>>,
    /// Two-phase DISTINCT views folded in Flink's Java HashMap order.
    ordered: view_order::OrderedViews,
    /// An incremental aggregate's final level (`AggPlan::final_key`).
    finals: Option<incremental::FinalLevel>,
    /// Whether the fixed-width calls fold in one JIT-compiled loop.
    fusion: fusion::Fusion,
    /// State bound to Flink's layout: what changed since the last
    /// write-back to the state backend (`flink_state`).
    flink_state: Option<flink_state::FlinkState>,
    /// Flink's message once a function failed the query (SINGLE_VALUE's
    /// second value): the changes Flink emits before that point were
    /// returned, and the operator takes nothing more.
    failure: Option<&'static str>,
}

/// The calls an operator runs and the record-counting one: over
/// retracting input Flink counts records with the first COUNT(*), or
/// inserts one after the other calls.
fn effective_calls(plan: &AggPlan) -> Result<(Vec<AggCall>, Option<usize>)> {
    let mut calls = plan.calls.clone();
    if plan.input != InputMode::Retracting {
        if calls.is_empty() {
            // A GROUP BY without calls (SELECT DISTINCT): one hidden COUNT(*)
            // keeps each group's state; its result is never output, so a
            // group emits +I once and then nothing, as in Flink.
            calls.push(count_star(Vec::new()));
        }
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
    calls.push(count_star(args));
    let counter = calls.len() - 1;
    Ok((calls, Some(counter)))
}

/// A hidden COUNT(*) over `args` (the global phase's partial column).
pub(crate) fn count_star(args: Vec<usize>) -> AggCall {
    AggCall {
        function: "COUNT_STAR".into(),
        args,
        arg_types: Vec::new(),
        distinct: false,
        filter: None,
        result_type: None,
        retracts: true,
    }
}

/// The registry rows of the calls an operator runs: the admitted ones, then
/// the inserted record counter's (looked up here, the only call admission
/// did not see).
pub(crate) fn call_admissions(
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

/// One accumulator per call, from its registry row; a call Flink planned
/// without retraction over retracting input sees only +I/+U rows.
pub(crate) fn create_accumulators(
    plan: &AggPlan,
    admissions: &[&'static Admission],
    calls: &[AggCall],
) -> Result<Vec<Box<dyn GroupAccumulator>>> {
    admissions
        .iter()
        .zip(calls)
        .map(|(admission, call)| {
            let acc = admission.create_call(&call.arg_types, plan.phase)?;
            Ok(if plan.call_input(call) != plan.input {
                Box::new(insert_only_call::InsertOnlyCall(acc)) as Box<dyn GroupAccumulator>
            } else {
                acc
            })
        })
        .collect()
}

/// Each call lists as many input columns as its accumulator reads
/// (`input_types[c]`: arguments, or partials in the global phase).
pub(crate) fn check_input_widths(calls: &[AggCall], input_types: &[Vec<DataType>]) -> Result<()> {
    for (i, (call, types)) in calls.iter().zip(input_types).enumerate() {
        if call.args.len() != types.len() {
            return Err(AggError::Plan(format!(
                "call {i} ({}) lists {} input columns but needs {}",
                call.function,
                call.args.len(),
                types.len()
            )));
        }
    }
    Ok(())
}

impl GroupAggOperator {
    /// An operator for an admitted plan, with an empty state.
    pub fn new(plan: AggPlan) -> Result<Self> {
        plan.validate()?;
        let admitted = admit(&plan).map_err(|e| AggError::Plan(e.reason))?;
        let (calls, counter) = effective_calls(&plan)?;
        let visible = plan.calls.len();
        let admissions = call_admissions(&plan, &admitted, &calls)?;
        let mut accs = create_accumulators(&plan, &admissions, &calls)?;
        let shared = shared_views::share(&plan, &calls, &mut accs);
        let bundle_accs = if plan.phase == Phase::Global {
            let mut bundle_accs = create_accumulators(&plan, &admissions, &calls)?;
            shared_views::share(&plan, &calls, &mut bundle_accs);
            bundle_accs
        } else {
            Vec::new()
        };
        let key_arrow: Vec<DataType> = plan.key_types.iter().map(arrow_type).collect();
        let (view_layouts, in_view) = views::layouts(&plan, calls.len())?;
        let ordered = view_order::OrderedViews::new(&plan, &view_layouts)?;
        let finals = incremental::FinalLevel::new(&plan, &calls, &accs, &in_view)?;
        let input_arrow: Vec<Vec<DataType>> = match plan.phase {
            Phase::Global => accs
                .iter()
                .zip(&in_view)
                .map(|(a, &viewed)| views::own_partials(a.partial_types(), viewed))
                .collect(),
            _ => calls
                .iter()
                .map(|c| c.arg_types.iter().map(arrow_type).collect())
                .collect(),
        };
        check_input_widths(&calls, &input_arrow)?;
        let fusion = fusion::Fusion::new(&plan, &calls, &accs, &input_arrow);
        let mut fields: Vec<Field> = key_arrow
            .iter()
            .enumerate()
            .map(|(i, t)| Field::new(format!("key{i}"), t.clone(), true))
            .collect();
        let (state_schema, snapshot_meta) = checkpoint::state_layout(
            &plan,
            &calls,
            &accs,
            visible,
            &admitted.specializations,
            &fields,
        );
        if let Some(finals) = &finals {
            fields = finals
                .positions()
                .iter()
                .map(|&p| fields[p].clone())
                .collect();
        }
        let partials_out = plan.phase == Phase::Local || finals.is_some();
        for (c, acc) in accs.iter().enumerate() {
            if partials_out {
                let own = views::own_partials(acc.partial_types(), in_view[c]);
                for (j, t) in own.into_iter().enumerate() {
                    fields.push(Field::new(format!("agg{c}_{j}"), t, true));
                }
            } else if c < visible {
                fields.push(Field::new(format!("agg{c}"), acc.result_type(), true));
            }
        }
        if plan.phase == Phase::Local {
            for (v, layout) in view_layouts.iter().enumerate() {
                fields.push(Field::new(format!("view{v}"), layout.data_type(), true));
            }
        }
        fields.push(Field::new(ROW_KIND_COLUMN, DataType::Int8, false));
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
            state_schema,
            snapshot_meta,
            ids: Vec::new(),
            last_row: Vec::new(),
            retention: ttl::Retention::default(),
            views: view_layouts,
            in_view,
            shared,
            ordered,
            finals,
            fusion,
            flink_state: None,
            failure: None,
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

    /// Whether the fixed-width calls run in one JIT-compiled loop:
    /// `fused N of M calls (...)`, or `static: <reason>`.
    pub fn jit_status(&self) -> &str {
        self.fusion.status()
    }

    /// Schema of the batches [`process`](Self::process) and
    /// [`flush`](Self::flush) return.
    pub fn output_schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Processes one input batch. Immediate mode returns the changelog
    /// rows it causes; the bundled modes buffer and return `None`.
    pub fn process(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        self.check_not_failed()?;
        let mut input = self.read_input(batch)?;
        if self.plan.phase == Phase::Global {
            views::split_input(&self.plan, &self.views, batch, &mut input)?;
        }
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

    /// Flink's `finishBundle`: emits the open bundle's changelog (or, for
    /// the local phase, its partials) and starts a new bundle. Immediate
    /// mode has no bundle and returns `None`.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        self.check_not_failed()?;
        match (self.plan.phase, self.plan.emission) {
            (Phase::Single, Emission::Immediate) => Ok(None),
            (Phase::Single, Emission::MiniBatch) => self.flush_bundled(),
            (Phase::Local, _) => self.flush_local(),
            (Phase::Global, _) if self.finals.is_some() => self.flush_incremental(),
            (Phase::Global, _) => self.flush_global(),
        }
    }

    /// Flink's message when a function failed the query in the latest
    /// `process` or `flush`, whose output holds the changes Flink emits
    /// before failing. Every later call fails with it.
    pub fn failure(&self) -> Option<&'static str> {
        self.failure
    }

    /// Checks `batch` against the plan and picks its key, argument and
    /// FILTER columns (`input::read` with this operator's calls).
    fn read_input<'a>(&self, batch: &'a RecordBatch) -> Result<input::Input<'a>> {
        let args: Vec<Vec<usize>> = self.calls.iter().map(|c| c.args.clone()).collect();
        let filters: Vec<Option<usize>> = self.calls.iter().map(|c| c.filter).collect();
        input::read(
            batch,
            &self.plan.key_columns,
            &self.key_arrow,
            (&args, &filters),
            &self.input_arrow,
            self.plan.input,
        )
    }

    fn check_not_failed(&self) -> Result<()> {
        match self.failure {
            Some(message) => Err(AggError::Failed(message.to_string())),
            None => Ok(()),
        }
    }

    /// The first row an output call refused in its latest update.
    fn first_refused_row(&self) -> Option<(usize, &'static str)> {
        self.accs[..self.visible]
            .iter()
            .filter_map(|a| a.refused_row())
            .min_by_key(|&(row, _)| row)
    }

    /// The first position in `groups` of a group an output call failed.
    fn first_failed_position(&self, groups: &[u32]) -> Option<(usize, &'static str)> {
        self.accs[..self.visible]
            .iter()
            .filter_map(|a| a.failed_position(groups))
            .min_by_key(|&(at, _)| at)
    }

    /// True when a bundle holds rows not yet flushed.
    pub fn has_open_bundle(&self) -> bool {
        match self.plan.phase {
            Phase::Local => !self.table.is_empty(),
            _ => !self.bundle.is_empty(),
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

    /// Drops the groups an intern added, and the scratch grown for them.
    fn undo_intern(&mut self, groups_before: usize) {
        self.table.truncate(groups_before);
        if self.last_row.len() > groups_before {
            self.last_row.truncate(groups_before);
            self.last_row.shrink_to_fit();
        }
    }

    /// Covers every interned group in the accumulators, liveness flags
    /// and bundle index.
    fn grow_groups(&mut self) {
        let n = self.table.len();
        for acc in &mut self.accs {
            acc.resize(n);
        }
        self.live.resize(n);
        self.bundle.grow(n);
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
        let mut seen = hashbrown::HashSet::new();
        for &g in &self.ids {
            let gi = g as usize;
            let untouched = gi >= self.bundle.slot_of.len() || self.bundle.slot_of[gi] == NONE;
            if untouched && seen.insert(g) {
                fresh.push(g);
            }
        }
        fresh
    }

    /// Bundle slots in the iteration order of Flink's bundle HashMap.
    fn hash_map_order(&mut self, groups: &[u32]) -> Vec<u32> {
        let all = self.table.key_hashes();
        let hashes: Vec<i32> = groups.iter().map(|&g| all[g as usize]).collect();
        let mut out = Vec::with_capacity(groups.len());
        self.order.iteration_order(&hashes, &mut out);
        out
    }

    /// Folds a batch's rows into every call's accumulator at the interned
    /// group ids and marks the groups this bundle touches first live (the
    /// caller's `first_touched`: a bundle's other groups got state in an
    /// earlier batch, and nothing takes it within a bundle).
    fn fold_rows(&mut self, input: &input::Input<'_>, first_touched: &[u32]) -> Result<()> {
        let fused = self.fusion.fold(&mut self.accs, input, &self.ids)?;
        let is_fused = |c: usize| fused.get(c).copied().unwrap_or(false);
        // The rows a FILTER selects, for the calls the static kernels fold.
        let rows: Vec<Option<BooleanArray>> = input
            .filters
            .iter()
            .enumerate()
            .map(|(c, filter)| match is_fused(c) {
                true => None,
                false => input::call_rows(filter.as_ref(), None),
            })
            .collect();
        let updates = input::updates(input, &rows, &self.ids);
        shared_views::fold_calls(&mut self.accs, &self.shared, &updates, |c, acc, update| {
            if is_fused(c) {
                return Ok(());
            }
            acc.update(update)
        })?;
        for &g in first_touched {
            self.live.set(g as usize);
        }
        Ok(())
    }
}
