//! `sum`: SUM over insert-only input (Flink's declarative SumAggFunction:
//! `IF(isNull(sum), value, sum + value)`): the sum is NULL until a value
//! arrives. Integer sums wrap and start at a valid-looking 0 with the flag
//! clear, IEEE sums start at -0.0 (so a first -0.0 stays), DECIMAL sums in
//! DECIMAL(38, s) turn NULL past 38 digits and the next value restarts
//! them.
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
//! functions = ["SUM"]
//! input = ["insert_only"]
//! input_reason = """retracting SUM keeps a count of values too, so a retraction can bring \
//! the sum back to NULL (Flink's SumWithRetractAggFunction), template sum_retract"""
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

use super::rules::{restarting, Equality, Scalar, SumArith, SumOp};
use crate::kernel::{Binding, SlotRule};
#[cfg(feature = "jit")]
use {
    super::sum_lowering::{jit_fold_sum, jit_sum_lowering, JitSumOp},
    crate::jit,
};

/// SUM with arithmetic `A`, results compared under `E`.
#[derive(Debug)]
pub struct Sum<A, E>(PhantomData<(A, E)>);

type AccOwned<A> = <<A as SumArith>::Acc as Binding>::Owned;
type AccRef<'a, A> = <<A as SumArith>::Acc as Binding>::Ref<'a>;
type InRef<'a, A> = <<A as SumArith>::In as Binding>::Ref<'a>;

/// Adds `value` to a SUM slot with `op` (an argument's or a partial's
/// addition): branch-free where the sum cannot overflow (the slot starts at
/// the identity), else restarting once NULL.
#[inline(always)]
fn add<A: SumArith>(
    acc: &mut AccOwned<A>,
    valid: &mut bool,
    value: <A::Acc as Scalar>::V,
    op: SumOp<A>,
) {
    if A::OVERFLOWS {
        restarting::<A>(acc, valid, value, value, op);
    } else {
        if let Some(total) = op(A::Acc::held(acc), value) {
            *acc = A::Acc::own(total);
        }
        *valid = true;
    }
}

impl<A: SumArith, E: Equality<A::Acc>> SlotRule for Sum<A, E> {
    type In = A::In;
    type Acc = A::Acc;
    const INITIAL_VALID: bool = false;
    const MERGE_NULL_POISONS: bool = false;

    #[inline(always)]
    fn initial() -> AccOwned<A> {
        A::Acc::own(A::identity())
    }

    #[inline(always)]
    fn identity<'a>() -> Option<InRef<'a, A>> {
        A::arg_identity().map(A::In::as_read)
    }

    #[inline(always)]
    fn fold(acc: &mut AccOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        add::<A>(acc, valid, A::widen(A::In::read(value)), A::add_arg)
    }

    #[inline(always)]
    fn merge(acc: &mut AccOwned<A>, valid: &mut bool, value: AccRef<'_, A>) {
        add::<A>(acc, valid, A::Acc::read(value), A::add)
    }

    #[inline(always)]
    fn same(a: AccRef<'_, A>, b: AccRef<'_, A>) -> bool {
        E::same(a, b)
    }

    /// The sum plus the widened value; valid (`add` without overflow).
    #[cfg(feature = "jit")]
    fn lowering() -> Option<jit::Lowering> {
        fn fold<A: SumArith>(
            b: &mut jit::FunctionBuilder<'_>,
            state: &mut jit::StateRow,
            value: Option<jit::Value>,
        ) {
            if jit_fold_sum::<A>(b, state, value, JitSumOp::Add) {
                state.set_valid(1);
            }
        }
        jit_sum_lowering::<A>(&[], fold::<A>, None)
    }
}
