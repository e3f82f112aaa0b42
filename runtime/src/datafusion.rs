//! DataFusion's `GroupsAccumulator` over any [`GroupAccumulator`].
//!
//! The generic [`Accumulator`] implements `GroupsAccumulator` once, with
//! one-line methods that call the generic functions here, so the same
//! kernels serve DataFusion queries; [`DataFusionAccumulator`] wraps a
//! registry-created `Box<dyn GroupAccumulator>` the same way.

use arrow_array::{Array, ArrayRef, BooleanArray};
use datafusion_common::{DataFusionError, Result as DfResult};
use datafusion_expr_common::groups_accumulator::{EmitTo, GroupsAccumulator};

use crate::accumulator::{BatchUpdate, GroupAccumulator};
use crate::error::AggError;
use crate::registry::Admission;
use crate::templates::{Accumulator, TemplateState};
use crate::types::SqlType;

/// An [`AggError`] as a DataFusion error.
pub fn to_datafusion(error: AggError) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

fn df(error: AggError) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

fn group_ids(group_indices: &[usize]) -> DfResult<Vec<u32>> {
    group_indices
        .iter()
        .map(|&g| {
            u32::try_from(g).map_err(|_| {
                df(AggError::Input(format!(
                    "group index {g} exceeds u32 range"
                )))
            })
        })
        .collect()
}

/// `GroupsAccumulator::update_batch`: grows to `total_num_groups`, then
/// folds the batch (the filter is applied by the kernels).
pub fn update_batch<A: GroupAccumulator + ?Sized>(
    acc: &mut A,
    values: &[ArrayRef],
    group_indices: &[usize],
    opt_filter: Option<&BooleanArray>,
    total_num_groups: usize,
) -> DfResult<()> {
    if acc.num_groups() < total_num_groups {
        acc.resize(total_num_groups);
    }
    let ids = group_ids(group_indices)?;
    let batch = BatchUpdate {
        args: values,
        group_ids: &ids,
        filter: opt_filter,
        row_kinds: None,
        distinct: None,
    };
    acc.update(&batch).map_err(df)
}

/// `GroupsAccumulator::merge_batch`: grows, then merges partial columns.
pub fn merge_batch<A: GroupAccumulator + ?Sized>(
    acc: &mut A,
    values: &[ArrayRef],
    group_indices: &[usize],
    total_num_groups: usize,
) -> DfResult<()> {
    if acc.num_groups() < total_num_groups {
        acc.resize(total_num_groups);
    }
    let ids = group_ids(group_indices)?;
    acc.merge(values, &ids).map_err(df)
}

/// `GroupsAccumulator::convert_to_state`: every input row as its own
/// group of the fresh accumulator `acc`, returned as partial columns.
pub fn convert_to_state<A: GroupAccumulator + ?Sized>(
    acc: &mut A,
    values: &[ArrayRef],
    opt_filter: Option<&BooleanArray>,
) -> DfResult<Vec<ArrayRef>> {
    let rows = values.first().map(|c| c.len()).unwrap_or(0);
    acc.reset();
    acc.resize(rows);
    let ids: Vec<u32> = (0..rows as u32).collect();
    let batch = BatchUpdate {
        args: values,
        group_ids: &ids,
        filter: opt_filter,
        row_kinds: None,
        distinct: None,
    };
    acc.update(&batch).map_err(df)?;
    acc.partials(&ids).map_err(df)
}

/// Drops the first `n` groups and shifts the rest down to start at 0.
fn drop_first<A: GroupAccumulator + ?Sized>(acc: &mut A, n: usize) -> DfResult<()> {
    let total = acc.num_groups();
    if n >= total {
        acc.reset();
        return Ok(());
    }
    let rest: Vec<u32> = (n as u32..total as u32).collect();
    let state = acc.snapshot(&rest).map_err(df)?;
    acc.reset();
    acc.resize(total - n);
    let shifted: Vec<u32> = (0..(total - n) as u32).collect();
    acc.restore(&state, &shifted).map_err(df)
}

fn emitted<A: GroupAccumulator + ?Sized>(acc: &A, emit_to: EmitTo) -> Vec<u32> {
    let n = match emit_to {
        EmitTo::All => acc.num_groups(),
        EmitTo::First(n) => n.min(acc.num_groups()),
    };
    (0..n as u32).collect()
}

/// `GroupsAccumulator::evaluate`: results of the emitted groups, which
/// are then dropped (the rest shift down for `EmitTo::First`).
pub fn evaluate<A: GroupAccumulator + ?Sized>(acc: &mut A, emit_to: EmitTo) -> DfResult<ArrayRef> {
    let groups = emitted(acc, emit_to);
    let result = acc.evaluate(&groups).map_err(df)?;
    drop_first(acc, groups.len())?;
    Ok(result)
}

/// `GroupsAccumulator::state`: partial columns of the emitted groups,
/// which are then dropped.
pub fn state<A: GroupAccumulator + ?Sized>(
    acc: &mut A,
    emit_to: EmitTo,
) -> DfResult<Vec<ArrayRef>> {
    let groups = emitted(acc, emit_to);
    let partials = acc.partials(&groups).map_err(df)?;
    drop_first(acc, groups.len())?;
    Ok(partials)
}

/// A registry-created accumulator as a DataFusion `GroupsAccumulator`.
#[derive(Debug)]
pub struct DataFusionAccumulator {
    admission: &'static Admission,
    arg: Option<SqlType>,
    inner: Box<dyn GroupAccumulator>,
}

impl DataFusionAccumulator {
    /// Creates the admitted accumulator for `arg`.
    pub fn new(admission: &'static Admission, arg: Option<SqlType>) -> crate::error::Result<Self> {
        Ok(DataFusionAccumulator {
            admission,
            arg,
            inner: admission.create(arg.as_ref())?,
        })
    }
}

impl GroupsAccumulator for DataFusionAccumulator {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> DfResult<()> {
        update_batch(
            self.inner.as_mut(),
            values,
            group_indices,
            opt_filter,
            total_num_groups,
        )
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> DfResult<ArrayRef> {
        evaluate(self.inner.as_mut(), emit_to)
    }

    fn state(&mut self, emit_to: EmitTo) -> DfResult<Vec<ArrayRef>> {
        state(self.inner.as_mut(), emit_to)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> DfResult<()> {
        merge_batch(self.inner.as_mut(), values, group_indices, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> DfResult<Vec<ArrayRef>> {
        let mut fresh = self.admission.create(self.arg.as_ref()).map_err(df)?;
        convert_to_state(fresh.as_mut(), values, opt_filter)
    }

    fn size(&self) -> usize {
        self.inner.memory_bytes()
    }
}

/// Every specialization (one [`Accumulator`] per template state) is a
/// DataFusion `GroupsAccumulator` through the generic functions above.
impl<S: TemplateState, const RETRACTING: bool> GroupsAccumulator for Accumulator<S, RETRACTING> {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> DfResult<()> {
        update_batch(self, values, group_indices, opt_filter, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> DfResult<ArrayRef> {
        evaluate(self, emit_to)
    }

    fn state(&mut self, emit_to: EmitTo) -> DfResult<Vec<ArrayRef>> {
        state(self, emit_to)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> DfResult<()> {
        merge_batch(self, values, group_indices, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> DfResult<Vec<ArrayRef>> {
        let mut fresh = Accumulator::<S, RETRACTING>::new(self.spec().clone());
        convert_to_state(&mut fresh, values, opt_filter)
    }

    fn size(&self) -> usize {
        GroupAccumulator::memory_bytes(self)
    }
}
