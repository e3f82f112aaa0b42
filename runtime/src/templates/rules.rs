//! Per-carrier rules the templates share, as Flink's generated Java code
//! applies them: how values of a carrier are ordered (MIN/MAX), compared
//! (suppressing unchanged results) and added (wrapping integers, IEEE
//! floats, DECIMAL(38) with overflow to NULL).
//!
//! The emitter picks one marker per type row from `types.toml`: `order`
//! selects [`TotalOrder`], [`JavaFloat`], [`BoolOrder`] or [`BytesOrder`];
//! `equality` selects [`JavaEq`] or [`BitEq`]; a sum entry's
//! `params.overflow` selects [`Wrapping`], [`Ieee`] or [`Decimal38`].

use std::fmt::Debug;
use std::marker::PhantomData;

use arrow_array::ArrowNativeTypeOp;

use crate::kernel::{Binding, Bool, Dec128, Dec64, Prim, Timestamp, Ts, Utf8};
#[cfg(feature = "jit")]
use {crate::jit, cranelift_codegen::ir::InstBuilder};

/// A binding whose values are read and held as the same `Copy` value
/// (every carrier but strings); the conversions are identities.
pub trait Scalar: Binding {
    /// The value.
    type V: Copy + PartialEq + Default + Debug + Send + 'static;
    /// A read value.
    fn read(value: Self::Ref<'_>) -> Self::V;
    /// A held value.
    fn held(owned: &Self::Owned) -> Self::V;
    /// The value as held.
    fn own(value: Self::V) -> Self::Owned;
    /// The value as read.
    fn as_read<'a>(value: Self::V) -> Self::Ref<'a>;
}

macro_rules! scalar {
    ($binding:ty, $value:ty $(, $generic:ident: $bound:path)?) => {
        impl$(<$generic: $bound>)? Scalar for $binding
        $(where $generic::Native: Default)?
        {
            type V = $value;
            #[inline(always)]
            fn read(value: $value) -> $value {
                value
            }
            #[inline(always)]
            fn held(owned: &$value) -> $value {
                *owned
            }
            #[inline(always)]
            fn own(value: $value) -> $value {
                value
            }
            #[inline(always)]
            fn as_read<'a>(value: $value) -> Self::Ref<'a> {
                value
            }
        }
    };
}

scalar!(Prim<T>, T::Native, T: arrow_array::types::ArrowPrimitiveType);
scalar!(Dec64, i64);
scalar!(Dec128, i128);
scalar!(Bool, bool);
scalar!(Ts, Timestamp);

/// MIN or MAX.
pub trait Direction: 'static {
    /// Whether smaller values win.
    const MIN: bool;
}

/// Smaller values win.
#[derive(Debug)]
pub struct Min;

/// Larger values win.
#[derive(Debug)]
pub struct Max;

impl Direction for Min {
    const MIN: bool = true;
}

impl Direction for Max {
    const MIN: bool = false;
}

/// The smallest and largest value of a totally ordered carrier.
pub trait Bounded: Copy + Ord {
    /// The smallest value.
    const LOWEST: Self;
    /// The largest value.
    const HIGHEST: Self;
}

macro_rules! bounded {
    ($($t:ty),*) => {$(
        impl Bounded for $t {
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}

bounded!(i8, i16, i32, i64, i128);

impl Bounded for Timestamp {
    const LOWEST: Self = Timestamp::new(i64::MIN, i32::MIN);
    const HIGHEST: Self = Timestamp::new(i64::MAX, i32::MAX);
}

/// How a running MIN/MAX folds values of one carrier (Flink's declarative
/// MinAggFunction / MaxAggFunction, which compare with Java's `<` / `>`).
pub trait ExtremeOrder: 'static {
    /// The carrier's binding.
    type B: Binding;
    /// The value a fresh group holds.
    fn initial<D: Direction>() -> <Self::B as Binding>::Owned;
    /// An argument value whose fold changes no state (the initial value of
    /// the branch-free total orders), or `None` for first-value rules.
    fn identity<'a, D: Direction>() -> Option<<Self::B as Binding>::Ref<'a>>;
    /// Folds one non-NULL value.
    fn fold<D: Direction>(
        acc: &mut <Self::B as Binding>::Owned,
        valid: &mut bool,
        value: <Self::B as Binding>::Ref<'_>,
    );
    /// [`ExtremeOrder::fold`] as the fused loop's IR over state `[value,
    /// valid]`, where the carrier has a fixed-width lowering.
    #[cfg(feature = "jit")]
    fn lowering<D: Direction>() -> Option<jit::Lowering> {
        None
    }
}

/// Signed integers, DECIMAL, DATE, TIME and TIMESTAMP: a total order. A
/// fresh group holds the largest (MIN) or smallest (MAX) value, so the
/// fold is a branch-free `min`/`max`.
#[derive(Debug)]
pub struct TotalOrder<B>(PhantomData<B>);

impl<B: Scalar> ExtremeOrder for TotalOrder<B>
where
    B::V: Bounded,
{
    type B = B;

    #[inline(always)]
    fn initial<D: Direction>() -> B::Owned {
        B::own(if D::MIN { B::V::HIGHEST } else { B::V::LOWEST })
    }

    #[inline(always)]
    fn identity<'a, D: Direction>() -> Option<B::Ref<'a>> {
        Some(B::as_read(if D::MIN {
            B::V::HIGHEST
        } else {
            B::V::LOWEST
        }))
    }

    #[inline(always)]
    fn fold<D: Direction>(acc: &mut B::Owned, valid: &mut bool, value: B::Ref<'_>) {
        let (held, value) = (B::held(acc), B::read(value));
        *acc = B::own(if D::MIN {
            held.min(value)
        } else {
            held.max(value)
        });
        *valid = true;
    }

    /// `smin`/`smax` of the held and the new value; valid.
    #[cfg(feature = "jit")]
    fn lowering<D: Direction>() -> Option<jit::Lowering> {
        fn fold<D: Direction>(
            b: &mut jit::FunctionBuilder<'_>,
            state: &mut jit::StateRow,
            value: Option<jit::Value>,
        ) {
            let Some(value) = value else { return };
            let held = state.get(b, 0);
            let folded = if D::MIN {
                b.ins().smin(held, value)
            } else {
                b.ins().smax(held, value)
            };
            state.set(0, folded);
            state.set_valid(1);
        }
        let ty = jit::carrier::<B::V>().filter(|t| t.is_int())?;
        Some(jit::Lowering {
            arg: Some(ty),
            state: vec![ty, jit::FLAG],
            fold: fold::<D>,
            retract: None,
        })
    }
}

/// BOOLEAN, false < true: MIN is AND from true, MAX is OR from false.
#[derive(Debug)]
pub struct BoolOrder;

impl ExtremeOrder for BoolOrder {
    type B = Bool;

    #[inline(always)]
    fn initial<D: Direction>() -> bool {
        D::MIN
    }

    #[inline(always)]
    fn identity<'a, D: Direction>() -> Option<<Bool as Binding>::Ref<'a>> {
        Some(D::MIN)
    }

    #[inline(always)]
    fn fold<D: Direction>(acc: &mut bool, valid: &mut bool, value: bool) {
        if D::MIN {
            *acc &= value;
        } else {
            *acc |= value;
        }
        *valid = true;
    }
}

/// FLOAT and DOUBLE under Java's `<` / `>`: the first value is taken,
/// later ones only when strictly less (greater). A NaN first stays, a NaN
/// later never replaces; -0.0 and 0.0 keep the first.
#[derive(Debug)]
pub struct JavaFloat<B>(PhantomData<B>);

impl<B: Scalar> ExtremeOrder for JavaFloat<B>
where
    B::V: PartialOrd,
{
    type B = B;

    #[inline(always)]
    fn initial<D: Direction>() -> B::Owned {
        B::own(B::V::default())
    }

    #[inline(always)]
    fn identity<'a, D: Direction>() -> Option<B::Ref<'a>> {
        None
    }

    #[inline(always)]
    fn fold<D: Direction>(acc: &mut B::Owned, valid: &mut bool, value: B::Ref<'_>) {
        let (held, value) = (B::held(acc), B::read(value));
        let wins = if D::MIN { value < held } else { value > held };
        if !*valid || wins {
            *acc = B::own(value);
            *valid = true;
        }
    }

    /// The value where the slot is NULL or Java's `<` (`>`) holds
    /// (ordered compares: false with a NaN); valid.
    #[cfg(feature = "jit")]
    fn lowering<D: Direction>() -> Option<jit::Lowering> {
        fn fold<D: Direction>(
            b: &mut jit::FunctionBuilder<'_>,
            state: &mut jit::StateRow,
            value: Option<jit::Value>,
        ) {
            use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
            let Some(value) = value else { return };
            let (held, valid) = (state.get(b, 0), state.get(b, 1));
            let cc = if D::MIN {
                FloatCC::LessThan
            } else {
                FloatCC::GreaterThan
            };
            let wins = b.ins().fcmp(cc, value, held);
            let empty = b.ins().icmp_imm_u(IntCC::Equal, valid, 0);
            let take = b.ins().bor(wins, empty);
            let folded = b.ins().select(take, value, held);
            state.set(0, folded);
            state.set_valid(1);
        }
        let ty = jit::carrier::<B::V>().filter(|t| t.is_float())?;
        Some(jit::Lowering {
            arg: Some(ty),
            state: vec![ty, jit::FLAG],
            fold: fold::<D>,
            retract: None,
        })
    }
}

/// CHAR and VARCHAR: unsigned lexicographic UTF-8 bytes
/// (BinaryStringData.compareTo); a winning value is copied into the slot.
#[derive(Debug)]
pub struct BytesOrder;

impl ExtremeOrder for BytesOrder {
    type B = Utf8;

    #[inline(always)]
    fn initial<D: Direction>() -> Vec<u8> {
        Vec::new()
    }

    #[inline(always)]
    fn identity<'a, D: Direction>() -> Option<<Utf8 as Binding>::Ref<'a>> {
        None
    }

    #[inline(always)]
    fn fold<D: Direction>(acc: &mut Vec<u8>, valid: &mut bool, value: &[u8]) {
        let wins = if D::MIN {
            value < acc.as_slice()
        } else {
            value > acc.as_slice()
        };
        if !*valid || wins {
            Utf8::store(acc, value);
            *valid = true;
        }
    }
}

/// When two results of a carrier are the same, so Flink suppresses the
/// unchanged one.
pub trait Equality<B: Binding>: 'static {
    /// Whether `a` and `b` are the same result.
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool;
}

/// Java `==` (for floats IEEE `==`: NaN != NaN, -0.0 == 0.0); value
/// equality for every other carrier.
#[derive(Debug)]
pub struct JavaEq;

impl<B: Binding> Equality<B> for JavaEq
where
    for<'a, 'b> B::Ref<'a>: PartialEq<B::Ref<'b>>,
{
    #[inline(always)]
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool {
        a == b
    }
}

/// The same bits (floats whose type row asks for exact equality).
#[derive(Debug)]
pub struct BitEq;

/// A float's bit pattern.
pub trait FloatBits: Copy {
    /// The bits.
    fn bits(self) -> u64;
}

impl FloatBits for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl FloatBits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl<B: Scalar> Equality<B> for BitEq
where
    B::V: FloatBits,
{
    #[inline(always)]
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool {
        B::read(a).bits() == B::read(b).bits()
    }
}

/// The addition of a sum over argument carrier `In` into sum carrier `Acc`.
pub trait SumArith: 'static {
    /// The argument's binding.
    type In: Scalar;
    /// The sum's binding.
    type Acc: Scalar;
    /// Whether a sum can overflow (DECIMAL(38)); the templates then make
    /// it NULL, each as its Flink function does.
    const OVERFLOWS: bool;
    /// Whether a NULL sum behaves as zero (integers: `0 + x` is `x` and
    /// `0 - x` is `-x`), so a sum may start at a valid zero.
    const NULL_IS_ZERO: bool;
    /// Flink's literal zero of the sum type (SUM0 and AVG start there).
    fn zero() -> <Self::Acc as Scalar>::V;
    /// The additive identity a fresh SUM holds (-0.0 for IEEE, so a first
    /// -0.0 stays -0.0).
    fn identity() -> <Self::Acc as Scalar>::V;
    /// An argument value whose addition changes no sum, if any.
    fn arg_identity() -> Option<<Self::In as Scalar>::V>;
    /// An argument value as a sum value.
    fn widen(value: <Self::In as Scalar>::V) -> <Self::Acc as Scalar>::V;
    /// `a + b`; `None` on overflow.
    fn add(
        a: <Self::Acc as Scalar>::V,
        b: <Self::Acc as Scalar>::V,
    ) -> Option<<Self::Acc as Scalar>::V>;
    /// `a - b`; `None` on overflow.
    fn sub(
        a: <Self::Acc as Scalar>::V,
        b: <Self::Acc as Scalar>::V,
    ) -> Option<<Self::Acc as Scalar>::V>;
    /// `sum + value` for a held sum and a widened argument value: [`add`],
    /// unless the argument's range allows a cheaper exact overflow check.
    ///
    /// [`add`]: SumArith::add
    #[inline(always)]
    fn add_arg(
        sum: <Self::Acc as Scalar>::V,
        value: <Self::Acc as Scalar>::V,
    ) -> Option<<Self::Acc as Scalar>::V> {
        Self::add(sum, value)
    }
    /// The Cranelift carriers of the argument and the sum where the
    /// addition has a fused-loop lowering (`sum_lowering.rs`: wrapping
    /// integers, IEEE floats; not DECIMAL(38), which overflows to NULL).
    #[cfg(feature = "jit")]
    fn jit_types() -> Option<(jit::Type, jit::Type)> {
        None
    }
    /// `sum - value`, as [`SumArith::add_arg`] adds.
    #[inline(always)]
    fn sub_arg(
        sum: <Self::Acc as Scalar>::V,
        value: <Self::Acc as Scalar>::V,
    ) -> Option<<Self::Acc as Scalar>::V> {
        Self::sub(sum, value)
    }
}

/// Java integer arithmetic: wraps, never overflows to NULL.
#[derive(Debug)]
pub struct Wrapping<In, Acc>(PhantomData<(In, Acc)>);

impl<In: Scalar, Acc: Scalar> SumArith for Wrapping<In, Acc>
where
    In::V: ArrowNativeTypeOp + Into<Acc::V>,
    Acc::V: ArrowNativeTypeOp,
{
    type In = In;
    type Acc = Acc;
    const OVERFLOWS: bool = false;
    const NULL_IS_ZERO: bool = true;

    #[inline(always)]
    fn zero() -> Acc::V {
        Acc::V::ZERO
    }

    #[inline(always)]
    fn identity() -> Acc::V {
        Acc::V::ZERO
    }

    #[inline(always)]
    fn arg_identity() -> Option<In::V> {
        Some(In::V::ZERO)
    }

    #[inline(always)]
    fn widen(value: In::V) -> Acc::V {
        value.into()
    }

    #[inline(always)]
    fn add(a: Acc::V, b: Acc::V) -> Option<Acc::V> {
        Some(a.add_wrapping(b))
    }

    #[inline(always)]
    fn sub(a: Acc::V, b: Acc::V) -> Option<Acc::V> {
        Some(a.sub_wrapping(b))
    }

    #[cfg(feature = "jit")]
    fn jit_types() -> Option<(jit::Type, jit::Type)> {
        let types = (jit::carrier::<In::V>()?, jit::carrier::<Acc::V>()?);
        (types.0.is_int() && types.1.is_int()).then_some(types)
    }
}

/// A float carrier's zeros.
pub trait IeeeFloat: Copy + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> {
    /// 0.0.
    const ZERO: Self;
    /// -0.0, the identity of IEEE addition (`x + -0.0` is `x` for every
    /// `x`, -0.0 and NaN included).
    const NEG_ZERO: Self;
}

impl IeeeFloat for f32 {
    const ZERO: Self = 0.0;
    const NEG_ZERO: Self = -0.0;
}

impl IeeeFloat for f64 {
    const ZERO: Self = 0.0;
    const NEG_ZERO: Self = -0.0;
}

/// IEEE float arithmetic (FLOAT sums in f32, as Flink's do).
#[derive(Debug)]
pub struct Ieee<In, Acc>(PhantomData<(In, Acc)>);

impl<In: Scalar, Acc: Scalar> SumArith for Ieee<In, Acc>
where
    In::V: IeeeFloat + Into<Acc::V>,
    Acc::V: IeeeFloat,
{
    type In = In;
    type Acc = Acc;
    const OVERFLOWS: bool = false;
    const NULL_IS_ZERO: bool = false;

    #[inline(always)]
    fn zero() -> Acc::V {
        Acc::V::ZERO
    }

    #[inline(always)]
    fn identity() -> Acc::V {
        Acc::V::NEG_ZERO
    }

    #[inline(always)]
    fn arg_identity() -> Option<In::V> {
        Some(In::V::NEG_ZERO)
    }

    #[inline(always)]
    fn widen(value: In::V) -> Acc::V {
        value.into()
    }

    #[inline(always)]
    fn add(a: Acc::V, b: Acc::V) -> Option<Acc::V> {
        Some(a + b)
    }

    #[inline(always)]
    fn sub(a: Acc::V, b: Acc::V) -> Option<Acc::V> {
        Some(a - b)
    }

    #[cfg(feature = "jit")]
    fn jit_types() -> Option<(jit::Type, jit::Type)> {
        let types = (jit::carrier::<In::V>()?, jit::carrier::<Acc::V>()?);
        (types.0.is_float() && types.1.is_float()).then_some(types)
    }
}

/// DECIMAL sums in DECIMAL(38, s): an unscaled i128 that overflows past
/// 38 digits (Flink's sum is then NULL).
#[derive(Debug)]
pub struct Decimal38<In>(PhantomData<In>);

impl<In: Scalar> SumArith for Decimal38<In>
where
    In::V: Into<i128>,
{
    type In = In;
    type Acc = Dec128;
    const OVERFLOWS: bool = true;
    const NULL_IS_ZERO: bool = false;

    #[inline(always)]
    fn zero() -> i128 {
        0
    }

    #[inline(always)]
    fn identity() -> i128 {
        0
    }

    #[inline(always)]
    fn arg_identity() -> Option<In::V> {
        None
    }

    #[inline(always)]
    fn widen(value: In::V) -> i128 {
        value.into()
    }

    #[inline(always)]
    fn add(a: i128, b: i128) -> Option<i128> {
        crate::kernel::decimal::add_38(a, b)
    }

    #[inline(always)]
    fn sub(a: i128, b: i128) -> Option<i128> {
        crate::kernel::decimal::sub_38(a, b)
    }

    /// An argument of at most 64 bits (DECIMAL(p <= 18)) cannot overflow
    /// the i128 addition: a held sum is within 38 digits (< 2^127 - 2^63)
    /// and the value within 2^63, so only the 38-digit bound is checked.
    #[inline(always)]
    fn add_arg(sum: i128, value: i128) -> Option<i128> {
        if std::mem::size_of::<In::V>() <= 8 {
            crate::kernel::decimal::within_38(sum.wrapping_add(value))
        } else {
            crate::kernel::decimal::add_38(sum, value)
        }
    }

    /// As [`Decimal38::add_arg`].
    #[inline(always)]
    fn sub_arg(sum: i128, value: i128) -> Option<i128> {
        if std::mem::size_of::<In::V>() <= 8 {
            crate::kernel::decimal::within_38(sum.wrapping_sub(value))
        } else {
            crate::kernel::decimal::sub_38(sum, value)
        }
    }
}

/// A sum operation (`SumArith::add` or `sub`) on the sum carrier of `A`.
pub(crate) type SumOp<A> = fn(
    <<A as SumArith>::Acc as Scalar>::V,
    <<A as SumArith>::Acc as Scalar>::V,
) -> Option<<<A as SumArith>::Acc as Scalar>::V>;

/// `op` on a sum that stays NULL once it overflowed (`plus(NULL, x)` is
/// NULL): SUM0 and AVG.
#[inline(always)]
pub(crate) fn sticky<A: SumArith>(
    sum: &mut <A::Acc as Binding>::Owned,
    valid: &mut bool,
    value: <A::Acc as Scalar>::V,
    op: SumOp<A>,
) {
    if A::OVERFLOWS {
        if *valid {
            match op(A::Acc::held(sum), value) {
                Some(total) => *sum = A::Acc::own(total),
                None => {
                    *sum = A::Acc::own(A::zero());
                    *valid = false;
                }
            }
        }
    } else if let Some(total) = op(A::Acc::held(sum), value) {
        *sum = A::Acc::own(total);
    }
}

/// `op` on a sum that a value restarts once NULL (`IF(isNull(sum), fresh,
/// sum op value)`), NULL on overflow: SUM and SUM over retractions.
#[inline(always)]
pub(crate) fn restarting<A: SumArith>(
    sum: &mut <A::Acc as Binding>::Owned,
    valid: &mut bool,
    value: <A::Acc as Scalar>::V,
    fresh: <A::Acc as Scalar>::V,
    op: SumOp<A>,
) {
    if *valid {
        match op(A::Acc::held(sum), value) {
            Some(total) => *sum = A::Acc::own(total),
            None => {
                *sum = A::Acc::own(A::zero());
                *valid = false;
            }
        }
    } else {
        *sum = A::Acc::own(fresh);
        *valid = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::decimal::MAX_38;

    /// The narrow-argument DECIMAL addition (no i128 overflow check) agrees
    /// with the checked one on every held sum at and near the 38-digit
    /// bounds and every 64-bit argument extreme.
    #[test]
    fn narrow_decimal_argument_arithmetic_matches_checked() {
        type Narrow = Decimal38<Dec64>;
        let sums = [-MAX_38, -MAX_38 + 5, -1, 0, 1, MAX_38 - 5, MAX_38];
        let values = [i64::MIN, i64::MIN + 1, -5, 0, 5, i64::MAX];
        for sum in sums {
            for value in values.map(i128::from) {
                assert_eq!(
                    Narrow::add_arg(sum, value),
                    Narrow::add(sum, value),
                    "{sum} + {value}"
                );
                assert_eq!(
                    Narrow::sub_arg(sum, value),
                    Narrow::sub(sum, value),
                    "{sum} - {value}"
                );
            }
        }
        assert_eq!(Narrow::add_arg(MAX_38 - 5, 5), Some(MAX_38));
        assert_eq!(Narrow::add_arg(MAX_38 - 5, 6), None);
        assert_eq!(Narrow::sub_arg(-MAX_38 + 5, 6), None);
    }
}
