//! `running_extreme`: MIN and MAX over insert-only input (Flink's
//! declarative MinAggFunction / MaxAggFunction): one running value per
//! group, merged the same way in the global phase.
//!
//! State: [`Slots`](crate::kernel::Slots) of this rule.
//!
//! Declaration, read by aggforge-codegen: spec entries name only functions,
//! input, distinct, types and phases; the template is chosen by function and
//! input, and its partial layout (Flink's field order), result type and
//! parameters come from here, per numeric class where they differ.
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["MIN", "MAX"]
//! input = ["insert_only"]
//! input_reason = """over retracting input MIN/MAX keep a counted multiset of values per group \
//! (Flink's MinWithRetractAggFunction), template counted_extreme"""
//! distinct_view = true
//! phases = ["single", "local", "global"]
//! partial = [{ name = "value", type = "arg" }]
//! result = "arg"
//! ```

use std::marker::PhantomData;

use super::rules::{Direction, Equality, ExtremeOrder};
use crate::kernel::{Binding, SlotRule};

/// The running extreme of carrier order `O` in direction `D` (MIN or MAX),
/// results compared under `E`.
#[derive(Debug)]
pub struct RunningExtreme<O, D, E>(PhantomData<(O, D, E)>);

type Owned<O> = <<O as ExtremeOrder>::B as Binding>::Owned;
type Ref<'a, O> = <<O as ExtremeOrder>::B as Binding>::Ref<'a>;

impl<O: ExtremeOrder, D: Direction, E: Equality<O::B>> SlotRule for RunningExtreme<O, D, E> {
    type In = O::B;
    type Acc = O::B;
    const INITIAL_VALID: bool = false;
    const MERGE_NULL_POISONS: bool = false;

    #[inline(always)]
    fn initial() -> Owned<O> {
        O::initial::<D>()
    }

    #[inline(always)]
    fn identity<'a>() -> Option<Ref<'a, O>> {
        O::identity::<D>()
    }

    #[inline(always)]
    fn fold(acc: &mut Owned<O>, valid: &mut bool, value: Ref<'_, O>) {
        O::fold::<D>(acc, valid, value)
    }

    #[inline(always)]
    fn merge(acc: &mut Owned<O>, valid: &mut bool, value: Ref<'_, O>) {
        O::fold::<D>(acc, valid, value)
    }

    #[inline(always)]
    fn same(a: Ref<'_, O>, b: Ref<'_, O>) -> bool {
        E::same(a, b)
    }

    #[cfg(feature = "jit")]
    fn lowering() -> Option<crate::jit::Lowering> {
        O::lowering::<D>()
    }
}
