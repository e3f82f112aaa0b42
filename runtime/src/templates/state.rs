//! The state kernels as template states: how the generic
//! [`Accumulator`](super::Accumulator) drives [`Slots`] (running extremes,
//! SUM, SUM0), [`AvgState`] (AVG, SUM over retractions), [`Counts`]
//! (COUNT, COUNT(*)), [`CountedExtremes`] (MIN/MAX over retractions),
//! [`ArrivalLists`] (FIRST_VALUE/LAST_VALUE over retractions), [`Concat`]
//! (LISTAGG) and [`StringLists`] (LISTAGG over retractions).

use arrow_array::ArrayRef;
use arrow_schema::DataType;

use super::{prepared_argument, select, AccSpec, TemplateState};
use crate::accumulator::BatchUpdate;
use crate::error::{AggError, Result};
use crate::kernel::multiset::JavaOrd;
use crate::kernel::{
    ArrivalLists, ArrivalRule, AvgRule, AvgState, Binding, Concat, CountedExtremes, Counts,
    GroupIds, MultisetRule, Separators, SlotRule, Slots, StringLists, Utf8,
};
use crate::types::Phase;

/// The calls every state kernel answers under the same names: its group
/// count, growing, clearing and resetting groups, and its memory.
macro_rules! kernel_basics {
    ($kernel:ident) => {
        fn len(&self) -> usize {
            $kernel::len(self)
        }

        fn resize(&mut self, n: usize) {
            $kernel::resize(self, n)
        }

        fn clear(&mut self, groups: &[u32]) {
            $kernel::clear(self, groups)
        }

        fn reset(&mut self) {
            $kernel::reset(self)
        }

        fn memory_bytes(&self) -> usize {
            $kernel::memory_bytes(self)
        }
    };
}
pub(super) use kernel_basics;

impl<R: SlotRule> TemplateState for Slots<R>
where
    Slots<R>: Send,
{
    kernel_basics!(Slots);

    #[cfg(feature = "jit")]
    fn lowering(_spec: &AccSpec) -> Option<crate::jit::Lowering> {
        R::lowering()
    }

    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        Some(Slots::jit_state(self))
    }

    fn bytes_per_group() -> usize {
        Slots::<R>::bytes_per_group()
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let (selected, column) = prepared_argument::<R::In, RETRACTING>(spec, batch, self.len())?;
        let values = R::In::bind(&column, spec.name)?;
        match selected.kinds {
            Some(kinds) => {
                Slots::update_signed(self, values, &selected.rows, &selected.groups, kinds)
            }
            None => Slots::update(self, values, &selected.rows, &selected.groups),
        }
        Ok(())
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let (selected, column) = prepared_argument::<R::In, RETRACTING>(spec, batch, self.len())?;
        let values = R::In::bind(&column, spec.name)?;
        Slots::update_traced(
            self,
            values,
            &selected.rows,
            selected.groups.ids(),
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
        Slots::merge(self, &partials[0], groups.ids(), spec.name)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        Slots::evaluate(self, groups, &spec.result_type, spec.name)
    }

    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        Ok(vec![Slots::evaluate(
            self,
            groups,
            &spec.result_type,
            spec.name,
        )?])
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        Slots::restore(self, &state[0], groups, spec.name)
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        Slots::<R>::mark_changed(before, after, changed, spec.name)
    }
}

impl<R: AvgRule> TemplateState for AvgState<R>
where
    AvgState<R>: Send,
{
    kernel_basics!(AvgState);

    #[cfg(feature = "jit")]
    fn lowering(_spec: &AccSpec) -> Option<crate::jit::Lowering> {
        R::lowering()
    }

    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        Some(AvgState::jit_state(self))
    }

    fn bytes_per_group() -> usize {
        AvgState::<R>::bytes_per_group()
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let (selected, column) = prepared_argument::<R::In, RETRACTING>(spec, batch, self.len())?;
        let values = R::In::bind(&column, spec.name)?;
        match selected.kinds {
            Some(kinds) => {
                AvgState::update_signed(self, values, &selected.rows, &selected.groups, kinds)
            }
            None => AvgState::update(self, values, &selected.rows, &selected.groups),
        }
        Ok(())
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let (selected, column) = prepared_argument::<R::In, RETRACTING>(spec, batch, self.len())?;
        let values = R::In::bind(&column, spec.name)?;
        AvgState::update_traced(
            self,
            values,
            &selected.rows,
            selected.groups.ids(),
            selected.kinds,
            changed,
            spec.scales,
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
        AvgState::merge(self, partials, groups, spec.name)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        AvgState::evaluate(self, groups, spec.scales, &spec.result_type, spec.name)
    }

    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        AvgState::partials(self, groups, &spec.partial_types[0], spec.name)
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        AvgState::restore(self, state, groups, spec.name)
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        AvgState::<R>::mark_changed(before, after, changed, spec.name)
    }
}

/// COUNT(x) reads the argument's validity; COUNT(*) (no argument type in
/// the spec) takes no argument column.
fn count_argument<'a>(spec: &AccSpec, batch: &BatchUpdate<'a>) -> Result<Option<&'a ArrayRef>> {
    match &spec.arg_type {
        Some(arg_type) => Ok(Some(crate::kernel::argument(
            batch, 0, arg_type, spec.name,
        )?)),
        None if batch.args.len() > 1 => Err(AggError::Input(format!(
            "{}: COUNT(*) takes no argument column, got {}",
            spec.name,
            batch.args.len()
        ))),
        None => Ok(None),
    }
}

impl TemplateState for Counts {
    kernel_basics!(Counts);

    /// COUNT reads only its argument's validity, never a value.
    #[cfg(feature = "jit")]
    fn lowering(_spec: &AccSpec) -> Option<crate::jit::Lowering> {
        Some(Counts::lowering(None))
    }

    #[cfg(feature = "jit")]
    fn jit_state(&mut self) -> Option<crate::jit::StatePtrs> {
        Some(Counts::jit_state(self))
    }

    fn bytes_per_group() -> usize {
        Counts::bytes_per_group()
    }

    fn state_types(&self, _spec: &AccSpec) -> Vec<DataType> {
        vec![DataType::Int64]
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let argument = count_argument(spec, batch)?;
        let selected = select::<RETRACTING>(spec, batch, self.len(), argument)?;
        match selected.kinds {
            Some(kinds) => Counts::update_signed(self, &selected.rows, &selected.groups, kinds),
            None => Counts::update(self, &selected.rows, &selected.groups),
        }
        Ok(())
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let argument = count_argument(spec, batch)?;
        let selected = select::<RETRACTING>(spec, batch, self.len(), argument)?;
        Counts::update_traced(
            self,
            &selected.rows,
            selected.groups.ids(),
            selected.kinds,
            changed,
        )
    }

    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        Counts::merge(self, &partials[0], groups.ids(), spec.name)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        Counts::evaluate(self, groups, spec.name)
    }

    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        Ok(vec![Counts::evaluate(self, groups, spec.name)?])
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        Counts::restore(self, &state[0], groups, spec.name)
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        Counts::mark_changed(before, after, changed, spec.name)
    }
}

/// The `merge` and `partials` of an ordered-values kernel: `two_phase`
/// ones have their own (Flink's accumulator as one struct column);
/// `single_phase` ones run in the single phase only, their snapshot
/// columns standing in for partials.
macro_rules! ordered_values_phases {
    (two_phase, $kernel:ident) => {
        fn merge<const RETRACTING: bool>(
            &mut self,
            spec: &AccSpec,
            partials: &[ArrayRef],
            groups: &GroupIds<'_>,
        ) -> Result<()> {
            $kernel::merge(self, &partials[0], groups.ids(), spec.name)
        }

        fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
            $kernel::partials(self, groups, &spec.result_type, spec.name)
        }

        fn load<const RETRACTING: bool>(
            &mut self,
            spec: &AccSpec,
            partials: &[ArrayRef],
            groups: &GroupIds<'_>,
        ) -> Result<()> {
            $kernel::load(self, &partials[0], groups.ids(), spec.name)
        }

        /// Flink keeps the map of each call as `agg<i>$map`.
        fn keeps_state_views() -> bool {
            true
        }

        fn state_partials(
            &self,
            spec: &AccSpec,
            groups: &[u32],
            whole: bool,
        ) -> Result<Vec<ArrayRef>> {
            match whole {
                true => None,
                false => $kernel::changed_partials(self, groups, &spec.result_type, spec.name)?,
            }
            .map_or_else(|| TemplateState::partials(self, spec, groups), Ok)
        }

        fn start_view_log(&mut self) {
            $kernel::start_log(self)
        }

        fn clear_view_log(&mut self) {
            $kernel::clear_log(self)
        }
    };
    (single_phase, $kernel:ident) => {
        fn merge<const RETRACTING: bool>(
            &mut self,
            spec: &AccSpec,
            _partials: &[ArrayRef],
            _groups: &GroupIds<'_>,
        ) -> Result<()> {
            super::single_phase_merge(spec)
        }

        fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
            TemplateState::snapshot(self, spec, groups)
        }
    };
}

/// The template state of a kernel holding each group's values in an
/// ordered map (MIN/MAX and FIRST_VALUE/LAST_VALUE over retractions).
macro_rules! ordered_values_state {
    ($kernel:ident, $rule:ident, $phases:ident) => {
        impl<R: $rule> TemplateState for $kernel<R>
        where
            <R::Val as Binding>::Owned: JavaOrd,
            $kernel<R>: Default + Send + std::fmt::Debug,
        {
            kernel_basics!($kernel);

            fn release_spare(&mut self) {
                $kernel::release_spare(self)
            }

            fn bytes_per_group() -> usize {
                $kernel::<R>::bytes_per_group()
            }

            fn bytes_per_input_row() -> usize {
                $kernel::<R>::bytes_per_row()
            }

            fn state_types(&self, spec: &AccSpec) -> Vec<DataType> {
                $kernel::<R>::state_types(&spec.result_type)
            }

            fn update<const RETRACTING: bool>(
                &mut self,
                spec: &AccSpec,
                batch: &BatchUpdate<'_>,
            ) -> Result<()> {
                let (selected, column) =
                    prepared_argument::<R::Val, RETRACTING>(spec, batch, self.len())?;
                let values = R::Val::bind(&column, spec.name)?;
                $kernel::update(
                    self,
                    values,
                    &selected.rows,
                    batch.group_ids,
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
                let (selected, column) =
                    prepared_argument::<R::Val, RETRACTING>(spec, batch, self.len())?;
                let values = R::Val::bind(&column, spec.name)?;
                $kernel::update_traced(
                    self,
                    values,
                    &selected.rows,
                    selected.groups.ids(),
                    selected.kinds,
                    changed,
                    &spec.result_type,
                    spec.name,
                )
            }

            ordered_values_phases!($phases, $kernel);

            fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
                $kernel::evaluate(self, groups, &spec.result_type, spec.name)
            }

            fn snapshot(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
                $kernel::snapshot(self, groups, &spec.result_type, spec.name)
            }

            fn restore(
                &mut self,
                spec: &AccSpec,
                state: &[ArrayRef],
                groups: &[u32],
            ) -> Result<()> {
                $kernel::restore(self, state, groups, spec.name)
            }

            fn mark_changed(
                spec: &AccSpec,
                before: &ArrayRef,
                after: &ArrayRef,
                changed: &mut [bool],
            ) -> Result<()> {
                $kernel::<R>::mark_changed(before, after, changed, spec.name)
            }
        }
    };
}

ordered_values_state!(CountedExtremes, MultisetRule, two_phase);
ordered_values_state!(ArrivalLists, ArrivalRule, single_phase);

/// LISTAGG's value column (Utf8, checked) and the rows whose FILTER holds:
/// a NULL value still sets the separator.
fn listagg_rows<'a, const RETRACTING: bool>(
    spec: &AccSpec,
    batch: &BatchUpdate<'a>,
    num_groups: usize,
) -> Result<(
    super::Selected<'a>,
    &'a arrow_array::StringArray,
    Separators<'a>,
)> {
    let column = crate::kernel::argument(batch, 0, spec.arg_type()?, spec.name)?;
    let selected = select::<RETRACTING>(spec, batch, num_groups, None)?;
    Ok((
        selected,
        Utf8::bind(column, spec.name)?,
        Separators::of(batch, spec.name)?,
    ))
}

impl TemplateState for Concat {
    kernel_basics!(Concat);

    fn bytes_per_group() -> usize {
        Concat::bytes_per_group()
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let (selected, values, separators) = listagg_rows::<RETRACTING>(spec, batch, self.len())?;
        Concat::update(self, values, separators, &selected.rows, &selected.groups);
        Ok(())
    }

    fn update_traced<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        let (selected, values, separators) = listagg_rows::<RETRACTING>(spec, batch, self.len())?;
        Concat::update_traced(
            self,
            values,
            separators,
            &selected.rows,
            &selected.groups,
            changed,
            spec.name,
        )
    }

    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        Concat::merge(self, partials, groups, spec.name)
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        Concat::evaluate(self, groups, spec.name)
    }

    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        Concat::partials(self, groups, spec.name)
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        Concat::restore(self, state, groups, spec.name)
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        crate::kernel::mark_changed_with::<Utf8>(before, after, changed, spec.name, |a, b| a == b)
    }
}

impl TemplateState for StringLists {
    kernel_basics!(StringLists);

    fn bytes_per_group() -> usize {
        StringLists::bytes_per_group()
    }

    fn bytes_per_input_row() -> usize {
        StringLists::bytes_per_row()
    }

    fn state_types(&self, _spec: &AccSpec) -> Vec<DataType> {
        StringLists::state_types(self)
    }

    fn configure_call(&mut self, phase: Phase, _args: usize) {
        if phase != Phase::Single {
            self.set_merging();
        }
    }

    fn call_partial_types(_spec: &AccSpec, args: usize) -> Option<Vec<DataType>> {
        // Flink's accumulator holds the separator only with one.
        Some(StringLists::partial_types(args > 1))
    }

    fn update<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        batch: &BatchUpdate<'_>,
    ) -> Result<()> {
        let (selected, column) = prepared_argument::<Utf8, RETRACTING>(spec, batch, self.len())?;
        let values = Utf8::bind(&column, spec.name)?;
        let separators = Separators::of(batch, spec.name)?;
        StringLists::update(
            self,
            values,
            separators,
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
        let (selected, column) = prepared_argument::<Utf8, RETRACTING>(spec, batch, self.len())?;
        let values = Utf8::bind(&column, spec.name)?;
        let separators = Separators::of(batch, spec.name)?;
        StringLists::update_traced(
            self,
            values,
            separators,
            &selected.rows,
            &selected.groups,
            selected.kinds,
            changed,
            spec.name,
        )
    }

    fn merge<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        if !self.merging() {
            return super::single_phase_merge(spec);
        }
        StringLists::merge(self, &partials[0], groups.ids(), spec.name)
    }

    fn load<const RETRACTING: bool>(
        &mut self,
        spec: &AccSpec,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
    ) -> Result<()> {
        StringLists::load(self, &partials[0], groups.ids(), spec.name)
    }

    /// Flink keeps the lists of each call as `agg<i>$list` and
    /// `agg<i>$retractList`; a write-back writes them whole.
    fn keeps_state_views() -> bool {
        true
    }

    /// Flink's state holds each group's `retractList` in every phase: kept
    /// from now on (state in Flink's layout).
    fn start_view_log(&mut self) {
        self.set_merging();
    }

    fn evaluate(&self, spec: &AccSpec, groups: &[u32]) -> Result<ArrayRef> {
        StringLists::evaluate(self, groups, spec.name)
    }

    fn partials(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        let with_delimiter = StringLists::partial_has_delimiter(&spec.partial_types);
        StringLists::partials(self, groups, with_delimiter, spec.name)
    }

    fn snapshot(&self, spec: &AccSpec, groups: &[u32]) -> Result<Vec<ArrayRef>> {
        StringLists::snapshot(self, groups, spec.name)
    }

    fn restore(&mut self, spec: &AccSpec, state: &[ArrayRef], groups: &[u32]) -> Result<()> {
        StringLists::restore(self, state, groups, spec.name)
    }

    fn mark_changed(
        spec: &AccSpec,
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
    ) -> Result<()> {
        crate::kernel::mark_changed_with::<Utf8>(before, after, changed, spec.name, |a, b| a == b)
    }
}
