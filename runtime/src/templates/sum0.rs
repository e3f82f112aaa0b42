//! `sum0`: SUM0 (`$SUM0`, Flink's Sum0AggFunction), insert-only and
//! retracting: the sum starts at a non-NULL zero; `plus(NULL, x)` and
//! `minus(NULL, x)` are NULL, so a DECIMAL(38) sum that overflowed stays
//! NULL, and a NULL partial makes the merged sum NULL.
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
//! functions = ["SUM0"]
//! input = ["insert_only", "retracting"]
//! distinct_view = true
//! phases = ["single", "local", "global"]
//! numeric = ["integer", "float", "decimal"]
//!
//! [partial]
//! integer = [{ name = "sum", type = "arg" }]
//! float = [{ name = "sum", type = "arg" }]
//! decimal = [{ name = "sum", type = "DECIMAL(38, s)" }]
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

use super::rules::{sticky, Equality, Scalar, SumArith};
use crate::kernel::{Binding, SlotRule};
#[cfg(feature = "jit")]
use {
    super::sum_lowering::{jit_fold_sum, jit_sum_lowering, JitSumOp},
    crate::jit,
};

/// SUM0 with arithmetic `A`, results compared under `E`.
#[derive(Debug)]
pub struct Sum0<A, E>(PhantomData<(A, E)>);

type AccOwned<A> = <<A as SumArith>::Acc as Binding>::Owned;
type AccRef<'a, A> = <<A as SumArith>::Acc as Binding>::Ref<'a>;
type InRef<'a, A> = <<A as SumArith>::In as Binding>::Ref<'a>;

impl<A: SumArith, E: Equality<A::Acc>> SlotRule for Sum0<A, E> {
    type In = A::In;
    type Acc = A::Acc;
    const INITIAL_VALID: bool = true;
    const MERGE_NULL_POISONS: bool = true;

    #[inline(always)]
    fn initial() -> AccOwned<A> {
        A::Acc::own(A::zero())
    }

    #[inline(always)]
    fn identity<'a>() -> Option<InRef<'a, A>> {
        A::arg_identity().map(A::In::as_read)
    }

    #[inline(always)]
    fn fold(acc: &mut AccOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        sticky::<A>(acc, valid, A::widen(A::In::read(value)), A::add_arg)
    }

    #[inline(always)]
    fn unfold(acc: &mut AccOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        sticky::<A>(acc, valid, A::widen(A::In::read(value)), A::sub_arg)
    }

    #[inline(always)]
    fn merge(acc: &mut AccOwned<A>, valid: &mut bool, value: AccRef<'_, A>) {
        sticky::<A>(acc, valid, A::Acc::read(value), A::add)
    }

    #[inline(always)]
    fn same(a: AccRef<'_, A>, b: AccRef<'_, A>) -> bool {
        E::same(a, b)
    }

    /// The sum plus (a retraction: minus) the widened value, validity kept
    /// (`sticky` without overflow).
    #[cfg(feature = "jit")]
    fn lowering() -> Option<jit::Lowering> {
        fn fold<A: SumArith>(
            b: &mut jit::FunctionBuilder<'_>,
            state: &mut jit::StateRow,
            value: Option<jit::Value>,
        ) {
            jit_fold_sum::<A>(b, state, value, JitSumOp::Add);
        }
        fn retract<A: SumArith>(
            b: &mut jit::FunctionBuilder<'_>,
            state: &mut jit::StateRow,
            value: Option<jit::Value>,
        ) {
            jit_fold_sum::<A>(b, state, value, JitSumOp::Sub);
        }
        jit_sum_lowering::<A>(&[], fold::<A>, Some(retract::<A>))
    }
}
