//! `sum_retract`: SUM over retracting input (Flink's
//! SumWithRetractAggFunction): a sum and a count of values per group; the
//! result is NULL while the count is 0. A NULL sum takes the first value
//! as it is and a first retraction of `x` gives `0 - x`; integer sums wrap
//! (a NULL sum behaves as 0, so they start at a valid 0), DECIMAL sums turn
//! NULL past 38 digits and the next value restarts them.
//!
//! State: [`AvgState`](crate::kernel::AvgState) of this rule.
//!
//! Declaration, read by aggforge-codegen: spec entries name only functions,
//! input, distinct, types and phases; the template is chosen by function and
//! input, and its partial layout (Flink's field order), result type and
//! parameters come from here, per numeric class where they differ.
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["SUM"]
//! input = ["retracting"]
//! input_reason = "insert-only SUM needs no count of values, template sum"
//! distinct_view = true
//! phases = ["single", "local", "global"]
//! numeric = ["integer", "float", "decimal"]
//!
//! [partial]
//! integer = [{ name = "sum", type = "arg" }, { name = "count", type = "BIGINT" }]
//! float = [{ name = "sum", type = "arg" }, { name = "count", type = "BIGINT" }]
//! decimal = [{ name = "sum", type = "DECIMAL(38, s)" }, { name = "count", type = "BIGINT" }]
//!
//! [result]
//! integer = "arg"
//! float = "arg"
//! decimal = "DECIMAL(38, s)"
//!
//! [params.overflow]
//! integer = "wrap"
//! float = "ieee"
//! decimal = "null"
//! ```

use std::marker::PhantomData;

use super::rules::{restarting, Equality, Scalar, SumArith, SumOp};
use crate::kernel::avg::Scales;
use crate::kernel::{AvgRule, Binding};
#[cfg(feature = "jit")]
use {super::sum_lowering::jit_counted_sum_lowering, crate::jit};

/// SUM over retractions with arithmetic `A`, results compared under `E`.
#[derive(Debug)]
pub struct SumRetract<A, E>(PhantomData<(A, E)>);

type SumOwned<A> = <<A as SumArith>::Acc as Binding>::Owned;
type SumRef<'a, A> = <<A as SumArith>::Acc as Binding>::Ref<'a>;
type InRef<'a, A> = <<A as SumArith>::In as Binding>::Ref<'a>;

/// `sum op value`, restarting a NULL sum with `fresh` unless a NULL sum
/// behaves as zero.
#[inline(always)]
fn apply<A: SumArith>(
    sum: &mut SumOwned<A>,
    valid: &mut bool,
    value: <A::Acc as Scalar>::V,
    fresh: <A::Acc as Scalar>::V,
    op: SumOp<A>,
) {
    if A::NULL_IS_ZERO {
        if let Some(total) = op(A::Acc::held(sum), value) {
            *sum = A::Acc::own(total);
        }
    } else {
        restarting::<A>(sum, valid, value, fresh, op);
    }
}

impl<A: SumArith, E: Equality<A::Acc>> AvgRule for SumRetract<A, E> {
    type In = A::In;
    type Sum = A::Acc;
    type Out = A::Acc;
    const INITIAL_VALID: bool = A::NULL_IS_ZERO;
    const MERGE_NULL_POISONS: bool = false;

    #[inline(always)]
    fn zero() -> SumOwned<A> {
        A::Acc::own(A::zero())
    }

    #[inline(always)]
    fn identity<'a>() -> Option<InRef<'a, A>> {
        if A::NULL_IS_ZERO {
            A::arg_identity().map(A::In::as_read)
        } else {
            None
        }
    }

    #[inline(always)]
    fn add(sum: &mut SumOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        let value = A::widen(A::In::read(value));
        apply::<A>(sum, valid, value, value, A::add_arg)
    }

    #[inline(always)]
    fn sub(sum: &mut SumOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        let value = A::widen(A::In::read(value));
        // `0 - x` (0.0 - x for floats, so a first retraction of 0.0 is 0.0).
        let fresh = A::sub(A::zero(), value).unwrap_or_else(A::zero);
        apply::<A>(sum, valid, value, fresh, A::sub_arg)
    }

    #[inline(always)]
    fn merge(sum: &mut SumOwned<A>, valid: &mut bool, value: SumRef<'_, A>) {
        let value = A::Acc::read(value);
        apply::<A>(sum, valid, value, value, A::add)
    }

    #[inline(always)]
    fn finish(sum: SumRef<'_, A>, _count: i64, _scales: Scales) -> Option<SumOwned<A>> {
        Some(A::Acc::own(A::Acc::read(sum)))
    }

    #[inline(always)]
    fn same(a: SumRef<'_, A>, b: SumRef<'_, A>) -> bool {
        E::same(a, b)
    }

    /// `apply` without overflow (a NULL sum restarts at the value, or at
    /// `0 - value` for a retraction, unless NULL behaves as zero), and the
    /// count plus (a retraction: minus) one.
    #[cfg(feature = "jit")]
    fn lowering() -> Option<jit::Lowering> {
        jit_counted_sum_lowering::<A, true>()
    }
}
