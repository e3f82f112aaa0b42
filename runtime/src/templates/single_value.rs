//! `single_value`: SINGLE_VALUE, the aggregate of every scalar subquery
//! (Flink's declarative SingleValueAggFunction), insert-only and
//! retracting: per group the value and a count of rows, NULL counting as
//! a value. A second value fails the query with Flink's message
//! ([`SINGLE_VALUE_ERROR`](crate::kernel::single::SINGLE_VALUE_ERROR)) at
//! the row (immediate mode) or key (mini-batch) where Flink fails, after
//! the changes Flink emitted before it.
//!
//! State: [`SingleValues`](crate::kernel::SingleValues) of this rule.
//!
//! Declaration, read by aggforge-codegen:
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["SINGLE_VALUE"]
//! input = ["insert_only", "retracting"]
//! phases = ["single", "local", "global"]
//! result = "arg"
//! partial = [{ name = "value", type = "arg" }, { name = "count", type = "INT" }]
//! ```
//!
//! Two-phase, Flink fails where a key's rows in a local bundle hold a
//! second value (its local flush, after the partials of the keys before
//! it in the bundle's HashMap order), where merging a partial into the
//! global bundle's accumulator makes the count exceed 1 (at that partial
//! row: the bundle emits nothing), and where merging the bundle into state
//! does (the global flush, after the changes of the keys before it); the
//! operators fail at the same points (`operator/two_phase.rs`).

use std::marker::PhantomData;

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use super::rules::Equality;
use super::state::kernel_basics;
use super::{select, AccSpec, TemplateState};
use crate::accumulator::BatchUpdate;
use crate::error::Result;
use crate::kernel::single::SINGLE_VALUE_ERROR;
use crate::kernel::{Binding, GroupIds, SingleRule, SingleValues};

/// SINGLE_VALUE of binding `B`, results compared under `E`.
#[derive(Debug)]
pub struct SingleValue<B, E>(PhantomData<(B, E)>);

impl<B: Binding, E: Equality<B>> SingleRule for SingleValue<B, E> {
    type Val = B;

    #[inline(always)]
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool {
        E::same(a, b)
    }
}

/// The argument column (checked, NULLs included) and the rows whose
/// FILTER holds.
fn rows<'a, const RETRACTING: bool>(
    spec: &AccSpec,
    batch: &BatchUpdate<'a>,
    num_groups: usize,
) -> Result<(super::Selected<'a>, &'a ArrayRef)> {
    let column = crate::kernel::argument(batch, 0, spec.arg_type()?, spec.name)?;
    Ok((select::<RETRACTING>(spec, batch, num_groups, None)?, column))
}

impl<R: SingleRule> TemplateState for SingleValues<R>
where
    SingleValues<R>: Send,
{
    kernel_basics!(SingleValues);

    fn bytes_per_group() -> usize {
        SingleValues::<R>::bytes_per_group()
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let (selected, column) = rows::<RETRACTING>(spec, batch, self.len())?;
        let values_column = R::Val::prepare(column)?;
        let values = R::Val::bind(&values_column, spec.name)?;
        SingleValues::update(
            self,
            values,
            column.nulls(),
            &selected.rows,
            &selected.groups,
            selected.kinds,
        );
        Ok(())
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let (selected, column) = rows::<RETRACTING>(spec, batch, self.len())?;
        let values_column = R::Val::prepare(column)?;
        let values = R::Val::bind(&values_column, spec.name)?;
        SingleValues::update_traced(
            self,
            values,
            column.nulls(),
            &selected.rows,
            &selected.groups,
            selected.kinds,
            changed,
            &spec.result_type,
            spec.name,
        )
    }

    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        SingleValues::merge(self, partials, groups, spec.name)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        SingleValues::evaluate(self, groups, &spec.result_type, spec.name)
    }

    fn state_types(&self, spec: &AccSpec) -> Vec<DataType> {
        vec![spec.result_type.clone(), DataType::Int32]
    }

    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        SingleValues::partials(self, groups, &spec.result_type, spec.name)
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        SingleValues::restore(self, state, groups, spec.name)
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        SingleValues::<R>::mark_changed(before, after, changed, spec.name)
    }

    fn refused_row(&self) -> Option<(usize, &'static str)> {
        SingleValues::refused_row(self).map(|row| (row, SINGLE_VALUE_ERROR))
    }

    fn failed_position(&self, groups: &[u32]) -> Option<(usize, &'static str)> {
        SingleValues::failed_position(self, groups).map(|at| (at, SINGLE_VALUE_ERROR))
    }
}
