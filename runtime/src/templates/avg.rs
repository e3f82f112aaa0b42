//! `avg`: AVG, insert-only and retracting (Flink's declarative
//! AvgAggFunction): a sum and a count per group, accumulate adds,
//! retract subtracts, the value is `sum / count` (NULL when the count is
//! 0). Integer AVG sums in BIGINT and divides truncating (Java `/`, then
//! the narrowing cast to the argument type); FLOAT/DOUBLE sum in DOUBLE;
//! DECIMAL sums in DECIMAL(38, s), stays NULL once it overflowed, and
//! divides into DECIMAL(38, max(6, s)) rounding HALF_UP.
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
//! functions = ["AVG"]
//! input = ["insert_only", "retracting"]
//! distinct_view = true
//! phases = ["single", "local", "global"]
//! numeric = ["integer", "float", "decimal"]
//!
//! [partial]
//! integer = [{ name = "sum", type = "BIGINT" }, { name = "count", type = "BIGINT" }]
//! float = [{ name = "sum", type = "DOUBLE" }, { name = "count", type = "BIGINT" }]
//! decimal = [{ name = "sum", type = "DECIMAL(38, s)" }, { name = "count", type = "BIGINT" }]
//!
//! [result]
//! integer = "arg"
//! float = "arg"
//! decimal = "DECIMAL(38, max(6, s))"
//!
//! [params.division]
//! integer = "truncate"
//! float = "float"
//! decimal = "half_up"
//! ```

use std::marker::PhantomData;

use super::rules::{sticky, Equality, Scalar, SumArith};
use crate::kernel::avg::Scales;
use crate::kernel::{AvgRule, Binding};
#[cfg(feature = "jit")]
use {super::sum_lowering::jit_counted_sum_lowering, crate::jit};

/// How AVG turns a sum and a count into the result.
pub trait Division<A: SumArith>: 'static {
    /// The result's binding.
    type Out: Binding;
    /// `sum / count`, `count > 0`; `None` for a NULL result.
    fn divide(
        sum: <A::Acc as Scalar>::V,
        count: i64,
        scales: Scales,
    ) -> Option<<Self::Out as Binding>::Owned>;
}

/// A BIGINT quotient narrowed as Java's cast does.
pub trait FromI64Wrapping {
    /// `value as Self`.
    fn narrow(value: i64) -> Self;
}

macro_rules! narrow {
    ($($t:ty),*) => {$(
        impl FromI64Wrapping for $t {
            #[inline(always)]
            fn narrow(value: i64) -> Self {
                value as $t
            }
        }
    )*};
}

narrow!(i8, i16, i32, i64);

/// A DOUBLE quotient as the result's float type.
pub trait FromF64 {
    /// `value as Self`.
    fn narrow(value: f64) -> Self;
}

impl FromF64 for f32 {
    #[inline(always)]
    fn narrow(value: f64) -> Self {
        value as f32
    }
}

impl FromF64 for f64 {
    #[inline(always)]
    fn narrow(value: f64) -> Self {
        value
    }
}

/// Integer AVG: Java's truncating `/` on the BIGINT sum, narrowed into
/// the result `Out`.
#[derive(Debug)]
pub struct Truncate<Out>(PhantomData<Out>);

impl<A: SumArith, Out: Scalar> Division<A> for Truncate<Out>
where
    A::Acc: Scalar<V = i64>,
    Out::V: FromI64Wrapping,
{
    type Out = Out;

    #[inline(always)]
    fn divide(sum: i64, count: i64, _scales: Scales) -> Option<Out::Owned> {
        Some(Out::own(Out::V::narrow(sum.wrapping_div(count))))
    }
}

/// FLOAT/DOUBLE AVG: the DOUBLE sum over the count, as the result type.
#[derive(Debug)]
pub struct FloatDivide<Out>(PhantomData<Out>);

impl<A: SumArith, Out: Scalar> Division<A> for FloatDivide<Out>
where
    A::Acc: Scalar<V = f64>,
    Out::V: FromF64,
{
    type Out = Out;

    #[inline(always)]
    fn divide(sum: f64, count: i64, _scales: Scales) -> Option<Out::Owned> {
        Some(Out::own(Out::V::narrow(sum / count as f64)))
    }
}

/// DECIMAL AVG: DECIMAL(38, s) sum over the count into DECIMAL(38, max(6,
/// s)), HALF_UP (NULL where the quotient does not fit).
#[derive(Debug)]
pub struct HalfUp;

impl<A: SumArith> Division<A> for HalfUp
where
    A::Acc: Scalar<V = i128>,
{
    type Out = crate::kernel::Dec128;

    #[inline(always)]
    fn divide(sum: i128, count: i64, scales: Scales) -> Option<i128> {
        crate::kernel::decimal::avg_38(sum, count, scales.sum, scales.result)
    }
}

/// AVG with sum arithmetic `A` and division `D`, results compared under `E`.
#[derive(Debug)]
pub struct Avg<A, D, E>(PhantomData<(A, D, E)>);

type SumOwned<A> = <<A as SumArith>::Acc as Binding>::Owned;
type SumRef<'a, A> = <<A as SumArith>::Acc as Binding>::Ref<'a>;
type InRef<'a, A> = <<A as SumArith>::In as Binding>::Ref<'a>;
type OutRef<'a, A, D> = <<D as Division<A>>::Out as Binding>::Ref<'a>;

impl<A: SumArith, D: Division<A>, E: Equality<D::Out>> AvgRule for Avg<A, D, E> {
    type In = A::In;
    type Sum = A::Acc;
    type Out = D::Out;
    const INITIAL_VALID: bool = true;
    const MERGE_NULL_POISONS: bool = true;

    #[inline(always)]
    fn zero() -> SumOwned<A> {
        A::Acc::own(A::zero())
    }

    #[inline(always)]
    fn identity<'a>() -> Option<InRef<'a, A>> {
        A::arg_identity().map(A::In::as_read)
    }

    #[inline(always)]
    fn add(sum: &mut SumOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        sticky::<A>(sum, valid, A::widen(A::In::read(value)), A::add_arg)
    }

    #[inline(always)]
    fn sub(sum: &mut SumOwned<A>, valid: &mut bool, value: InRef<'_, A>) {
        sticky::<A>(sum, valid, A::widen(A::In::read(value)), A::sub_arg)
    }

    #[inline(always)]
    fn merge(sum: &mut SumOwned<A>, valid: &mut bool, value: SumRef<'_, A>) {
        sticky::<A>(sum, valid, A::Acc::read(value), A::add)
    }

    #[inline(always)]
    fn finish(
        sum: SumRef<'_, A>,
        count: i64,
        scales: Scales,
    ) -> Option<<D::Out as Binding>::Owned> {
        D::divide(A::Acc::read(sum), count, scales)
    }

    #[inline(always)]
    fn same(a: OutRef<'_, A, D>, b: OutRef<'_, A, D>) -> bool {
        E::same(a, b)
    }

    /// The sum plus the widened value, validity kept (`sticky` without
    /// overflow), and the count plus one; a retraction subtracts both.
    #[cfg(feature = "jit")]
    fn lowering() -> Option<jit::Lowering> {
        jit_counted_sum_lowering::<A, false>()
    }
}
