//! State templates: the per-function semantics as ordinary Rust, and the
//! one generic accumulator that serves every specialization.
//!
//! A state template is one file here, named after it (`running_extreme`,
//! `sum`, `sum0`, `count`, `count_star`, `avg`, `sum_retract`,
//! `counted_extreme`, `first_last`, `listagg`, ...): the rule its state kernel (in [`crate::kernel`])
//! applies, written once over generic carriers, with the per-carrier
//! behaviour (Java ordering, wrapping integer sums, the DECIMAL(38)
//! overflow rule, ...) in [`rules`]. A specialization is one instantiation,
//! e.g. `Accumulator<Slots<RunningExtreme<TotalOrder<Prim<Int32Type>>, Min>>>`:
//! the generated registry (`crate::generated`) holds one constructor line
//! per specialization and nothing else that runs.
//!
//! [`Accumulator`] implements [`GroupAccumulator`] (and, with the
//! `datafusion` feature, DataFusion's `GroupsAccumulator`) once for every
//! [`TemplateState`]: the checks every call shares (row kinds against the
//! input mode, group ids, argument and partial columns) live here, the
//! folds in the state kernels.

pub mod avg;
pub mod count;
pub mod count_star;
pub mod counted_extreme;
pub mod distinct;
pub mod distinct_view;
pub mod first_last;
pub mod first_last_retract;
pub mod listagg;
pub mod listagg_retract;
pub mod rules;
pub mod running_extreme;
pub mod single_value;
mod state;
pub mod sum;
pub mod sum0;
#[cfg(feature = "jit")]
mod sum_lowering;
pub mod sum_retract;

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::accumulator::{BatchUpdate, DistinctRows, GroupAccumulator, ViewHandle};
use crate::error::{AggError, Result};
use crate::kernel::avg::Scales;
use crate::kernel::{Binding, GroupIds, Rows};
use crate::types::{Phase, SqlType};

/// What one specialization instance is: its name, input mode and column
/// types, fixed when the plan is admitted (the argument's actual SQL type
/// fixes DECIMAL precision and scale and TIMESTAMP precision).
#[derive(Debug, Clone, PartialEq)]
pub struct AccSpec {
    /// Specialization name, e.g. `MIN<INT>/insert_only`.
    pub name: &'static str,
    /// The argument's SQL type (`None` for COUNT(*)).
    pub sql_arg: Option<SqlType>,
    /// Arrow type of the argument column (`None` for COUNT(*)).
    pub arg_type: Option<DataType>,
    /// Arrow type of the result.
    pub result_type: DataType,
    /// Arrow types of the partial (two-phase) columns, in Flink's order.
    pub partial_types: Vec<DataType>,
    /// Decimal scales of the sum and the result (AVG's division).
    pub scales: Scales,
}

impl AccSpec {
    /// The argument's Arrow type; a plan error for templates that need one.
    pub fn arg_type(&self) -> Result<&DataType> {
        self.arg_type
            .as_ref()
            .ok_or_else(|| AggError::Plan(format!("{} needs an argument type", self.name)))
    }
}

/// A state kernel serving as a template's state: what the generic
/// [`Accumulator`] calls. Columns handed to `merge` and `restore` are
/// already checked against the partial and state layouts.
pub trait TemplateState: Default + Send + std::fmt::Debug + 'static {
    /// Sets the input mode (`retracting`) once, on a fresh state.
    fn configure(&mut self, _retracting: bool) {}
    /// Sets the phase and argument count of the call once, on a fresh
    /// state (a state whose layout differs between them).
    fn configure_call(&mut self, _phase: Phase, _args: usize) {}
    /// The partial types of a call with `args` arguments, where they are
    /// not the spec's (Flink's accumulator differs with a separator).
    fn call_partial_types(_spec: &AccSpec, _args: usize) -> Option<Vec<DataType>> {
        None
    }
    /// Number of groups held.
    fn len(&self) -> usize;
    /// True when no group is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Inline bytes one more group costs.
    fn bytes_per_group() -> usize;
    /// Bytes state may grow by per folded row beyond a group's (a multiset
    /// entry); 0 for fixed-size state.
    fn bytes_per_input_row() -> usize {
        0
    }
    /// Arrow types of the snapshot columns.
    fn state_types(&self, spec: &AccSpec) -> Vec<DataType> {
        spec.partial_types.clone()
    }
    /// Grows (or shrinks) to `n` groups; new groups are fresh.
    fn resize(&mut self, n: usize);
    /// Resets the listed groups to a fresh state.
    fn clear(&mut self, groups: &[u32]);
    /// Resets the listed groups' aggregate state, keeping what a DISTINCT
    /// view has seen (the incremental aggregate's per-bundle results).
    fn clear_results(&mut self, groups: &[u32]) {
        self.clear(groups);
    }
    /// Drops every group.
    fn reset(&mut self);
    /// Frees what `reset` kept for reuse (see
    /// [`GroupAccumulator::release_spare`]).
    fn release_spare(&mut self) {}
    /// Bytes held, heap included.
    fn memory_bytes(&self) -> usize;
    /// Folds a batch of raw rows (retracting -U/-D rows when the input
    /// retracts, `RETRACTING`; else such rows are an error).
    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()>;
    /// Folds like `update` and returns each row's result right after it,
    /// setting `changed[row]` where it differs from the result before.
    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef>;
    /// Merges partial columns (checked) into the groups of checked ids
    /// (partials of retracting input when `RETRACTING`).
    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()>;
    /// Sets fresh groups from partial columns read back from Flink's state
    /// backend (checked; see `GroupAccumulator::load`): a merge unless the
    /// state holds more than its partials say.
    fn load<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        self.merge::<RETRACTING>(spec, partials, groups)
    }
    /// See `GroupAccumulator::keeps_state_views`.
    fn keeps_state_views() -> bool {
        false
    }
    /// See `GroupAccumulator::state_partials`.
    fn state_partials(&self, spec: &AccSpec, groups: &[u32], whole: bool) -> Result<Vec<ArrayRef>> {
        let _ = whole;
        self.partials(spec, groups)
    }
    /// See `GroupAccumulator::start_view_log`.
    fn start_view_log(&mut self) {}
    /// See `GroupAccumulator::clear_view_log`.
    fn clear_view_log(&mut self) {}
    /// See `GroupAccumulator::view_changes`.
    fn view_changes(
        &self,
        _spec: &AccSpec,
        _groups: &[u32],
    ) -> Result<Option<distinct_view::ChangedEntries>> {
        Ok(None)
    }
    /// The results of the listed groups.
    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef>;
    /// The partial columns of the listed groups.
    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>>;
    /// The aggregate's own partial columns, without a DISTINCT view's list
    /// (the partials for a call that is not DISTINCT).
    fn result_partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.partials(spec, groups)
    }
    /// The snapshot columns of the listed groups (the partials unless the
    /// state holds more).
    fn snapshot(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.partials(spec, groups)
    }
    /// Restores the listed groups from snapshot columns (checked).
    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()>;
    /// Sets `changed[i]` where two result columns differ under the
    /// template's equality.
    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()>;
    /// The first row the latest update refused, with the message (a
    /// function that fails the query, SINGLE_VALUE); `None` for templates
    /// that never refuse.
    fn refused_row(&self) -> Option<(usize, &'static str)> {
        None
    }
    /// The position in `groups` of the first group a refused row failed.
    fn failed_position(&self, _groups: &[u32]) -> Option<(usize, &'static str)> {
        None
    }
    /// The fused loop's lowering of this state's update for `spec` (with
    /// its retraction where the rule has one), `None` where it has none.
    #[cfg(feature = "jit")]
    fn lowering(_spec: &AccSpec) -> Option<crate::jit::Lowering> {
        None
    }
    /// The state columns [`TemplateState::lowering`] updates.
    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        None
    }
    /// A fresh DISTINCT view for `calls` calls over this state's carrier
    /// (`None`: not a DISTINCT view).
    fn new_view(&self, _calls: usize) -> Option<ViewHandle> {
        None
    }
    /// Makes this state column `call` of `view`; false when it cannot.
    fn join_view(&mut self, _view: &ViewHandle, _call: usize) -> bool {
        false
    }
    /// Runs a batch through the shared view for every call of it.
    fn view_pass<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        _batches: &[BatchUpdate<'_>],
    ) -> Result<Vec<DistinctRows>> {
        Err(AggError::Unsupported(format!(
            "{} has no DISTINCT view",
            spec.name
        )))
    }
}

/// The `merge` of a template that runs in the single phase only (its
/// snapshot columns stand in for partials): an error, never reached by a
/// plan the registry admits.
pub(crate) fn single_phase_merge(spec: &AccSpec) -> Result<()> {
    Err(AggError::Plan(format!(
        "{} runs in the single phase only; it has no partials to merge",
        spec.name
    )))
}

/// The rows of one batch a fold applies to: the row kinds (when the input
/// retracts and the batch does), the group ids proven in range and the
/// selected rows (argument non-NULL and FILTER true).
pub(crate) struct Selected<'a> {
    pub kinds: Option<&'a [i8]>,
    pub groups: GroupIds<'a>,
    pub rows: Rows,
}

/// The row kinds, group ids and selected rows of `batch`, given the
/// argument column whose NULLs are skipped (`None`: every row counts).
/// Inlined, with the input mode a constant, so each template's update
/// compiles as one function (measured with callgrind: a call and a
/// run-time input mode cost MIN+MAX over INT 1.9 instructions per row).
#[inline(always)]
pub(crate) fn select<'a, const RETRACTING: bool>(
    spec: &AccSpec,
    batch: &BatchUpdate<'a>,
    num_groups: usize,
    argument: Option<&ArrayRef>,
) -> Result<Selected<'a>> {
    let kinds = if RETRACTING {
        crate::kernel::retract_kinds(batch, spec.name)?
    } else {
        crate::kernel::check_insert_only(batch, spec.name)?;
        None
    };
    let groups = crate::kernel::check_groups(batch.group_ids, num_groups, spec.name)?;
    let nulls = argument.and_then(|column| column.nulls());
    let rows = Rows::new(batch.len(), nulls, batch.filter, spec.name)?;
    Ok(Selected {
        kinds,
        groups,
        rows,
    })
}

/// [`select`] for a template with one argument, which is checked against
/// the specialization's Arrow type and prepared for binding `B` (the
/// caller binds it once: `B::bind(&column, spec.name)`).
#[inline(always)]
pub(crate) fn prepared_argument<'a, B: Binding, const RETRACTING: bool>(
    spec: &AccSpec,
    batch: &BatchUpdate<'a>,
    num_groups: usize,
) -> Result<(Selected<'a>, ArrayRef)> {
    let column = crate::kernel::argument(batch, 0, spec.arg_type()?, spec.name)?;
    let selected = select::<RETRACTING>(spec, batch, num_groups, Some(column))?;
    Ok((selected, B::prepare(column)?))
}

/// One aggregate call's accumulator: a template's state and the spec it
/// was admitted with. Every specialization is one `Accumulator<S, R>`; `R`
/// is whether its input retracts.
#[derive(Debug)]
pub struct Accumulator<S: TemplateState, const RETRACTING: bool> {
    spec: AccSpec,
    state: S,
}

impl<S: TemplateState, const RETRACTING: bool> Accumulator<S, RETRACTING> {
    /// An accumulator with no groups.
    pub fn new(spec: AccSpec) -> Self {
        let mut state = S::default();
        state.configure(RETRACTING);
        Accumulator { spec, state }
    }

    /// [`Accumulator::new`], boxed: what registry constructors return.
    pub fn boxed(spec: AccSpec) -> Result<Box<dyn GroupAccumulator>> {
        Ok(Box::new(Self::new(spec)))
    }

    /// The spec it was created with.
    pub fn spec(&self) -> &AccSpec {
        &self.spec
    }

    /// `group_ids` and `partials` checked against the groups held and the
    /// spec's partial types, for a merge or a load.
    fn checked<'a>(
        &self,
        partials: &'a [ArrayRef],
        group_ids: &'a [u32],
    ) -> Result<(GroupIds<'a>, &'a [ArrayRef])> {
        let groups = crate::kernel::check_groups(group_ids, self.state.len(), self.spec.name)?;
        let partials = crate::kernel::check_columns(
            partials,
            &self.spec.partial_types,
            group_ids.len(),
            self.spec.name,
        )?;
        Ok((groups, partials))
    }
}

impl<S: TemplateState, const RETRACTING: bool> GroupAccumulator for Accumulator<S, RETRACTING> {
    fn name(&self) -> &'static str {
        self.spec.name
    }

    /// A retracting specialization fuses only with its rule's retraction;
    /// an insert-only one never sees a -U/-D row, so it has none.
    #[cfg(feature = "jit")]
    fn jit_lowering(&self) -> Option<crate::jit::Lowering> {
        let lowering = S::lowering(&self.spec)?;
        if RETRACTING {
            lowering.retract.is_some().then_some(lowering)
        } else {
            Some(crate::jit::Lowering {
                retract: None,
                ..lowering
            })
        }
    }

    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        self.state.jit_state()
    }

    fn result_type(&self) -> DataType {
        self.spec.result_type.clone()
    }

    fn partial_types(&self) -> Vec<DataType> {
        self.spec.partial_types.clone()
    }

    fn state_types(&self) -> Vec<DataType> {
        self.state.state_types(&self.spec)
    }

    fn configure_call(&mut self, phase: Phase, args: usize) {
        self.state.configure_call(phase, args);
        if let Some(types) = S::call_partial_types(&self.spec, args) {
            self.spec.partial_types = types;
        }
    }

    fn num_groups(&self) -> usize {
        self.state.len()
    }

    fn bytes_per_group(&self) -> usize {
        S::bytes_per_group()
    }

    fn bytes_per_input_row(&self) -> usize {
        S::bytes_per_input_row()
    }

    fn resize(&mut self, total_groups: usize) {
        self.state.resize(total_groups);
    }

    fn update(&mut self, batch: &BatchUpdate<'_>) -> Result<()> {
        self.state.update::<RETRACTING>(&self.spec, batch)
    }

    fn update_traced(&mut self, batch: &BatchUpdate<'_>, changed: &mut [bool]) -> Result<ArrayRef> {
        self.state
            .update_traced::<RETRACTING>(&self.spec, batch, changed)
    }

    fn merge(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
        let (groups, partials) = self.checked(partials, group_ids)?;
        self.state
            .merge::<RETRACTING>(&self.spec, partials, &groups)
    }

    fn load(&mut self, partials: &[ArrayRef], group_ids: &[u32]) -> Result<()> {
        let (groups, partials) = self.checked(partials, group_ids)?;
        self.state.load::<RETRACTING>(&self.spec, partials, &groups)
    }

    fn start_view_log(&mut self) {
        self.state.start_view_log()
    }

    fn clear_view_log(&mut self) {
        self.state.clear_view_log()
    }

    fn view_changes(&self, groups: &[u32]) -> Result<Option<distinct_view::ChangedEntries>> {
        self.state.view_changes(&self.spec, groups)
    }

    fn keeps_state_views(&self) -> bool {
        S::keeps_state_views()
    }

    fn state_partials(&self, groups: &[u32], whole: bool) -> Result<Vec<ArrayRef>> {
        self.state.state_partials(&self.spec, groups, whole)
    }

    fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef> {
        self.state.evaluate(&self.spec, groups)
    }

    fn partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.state.partials(&self.spec, groups)
    }

    fn result_partials(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.state.result_partials(&self.spec, groups)
    }

    fn snapshot(&self, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        self.state.snapshot(&self.spec, groups)
    }

    fn restore(&mut self, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        let types = self.state.state_types(&self.spec);
        let state = crate::kernel::check_columns(state, &types, groups.len(), self.spec.name)?;
        self.state.restore(&self.spec, state, groups)
    }

    fn mark_changed(
        &self,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        S::mark_changed(&self.spec, before, after, changed)
    }

    fn clear(&mut self, groups: &[u32]) {
        self.state.clear(groups);
    }

    fn clear_results(&mut self, groups: &[u32]) {
        self.state.clear_results(groups);
    }

    fn reset(&mut self) {
        self.state.reset();
    }

    fn release_spare(&mut self) {
        self.state.release_spare();
    }

    fn memory_bytes(&self) -> usize {
        self.state.memory_bytes()
    }

    fn refused_row(&self) -> Option<(usize, &'static str)> {
        self.state.refused_row()
    }

    fn failed_position(&self, groups: &[u32]) -> Option<(usize, &'static str)> {
        self.state.failed_position(groups)
    }

    fn new_distinct_view(&self, calls: usize) -> Option<ViewHandle> {
        self.state.new_view(calls)
    }

    fn join_distinct_view(&mut self, view: &ViewHandle, call: usize) -> bool {
        self.state.join_view(view, call)
    }

    fn distinct_pass(&mut self, batches: &[BatchUpdate<'_>]) -> Result<Vec<DistinctRows>> {
        self.state.view_pass::<RETRACTING>(&self.spec, batches)
    }
}
