//! The fused loop's lowerings of the sum rules ([`SumArith`] with
//! `Wrapping` and `Ieee` arithmetic): the addition and retraction of an
//! argument, the restart of a NULL sum, and the lowerings SUM, SUM0, AVG
//! and SUM over retractions build from them (`crate::jit`). Beside
//! `rules.rs`, whose Rust arithmetic they mirror.

use cranelift_codegen::ir::InstBuilder;

use super::rules::SumArith;
use crate::jit;

/// Which of a sum's operations the fused loop applies: an argument's
/// addition ([`SumArith::add_arg`]) or its retraction
/// ([`SumArith::sub_arg`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JitSumOp {
    /// `sum + value`.
    Add,
    /// `sum - value`.
    Sub,
}

/// `sum op value` in the fused loop, for arithmetic `A` whose
/// [`SumArith::jit_types`] are `(arg, sum)`: the argument widened, then a
/// wrapping integer or IEEE addition or subtraction (`add_arg` and
/// `sub_arg` of `Wrapping` and `Ieee`).
fn jit_sum_op(
    b: &mut jit::FunctionBuilder<'_>,
    (arg, sum_type): (jit::Type, jit::Type),
    sum: jit::Value,
    value: jit::Value,
    op: JitSumOp,
) -> jit::Value {
    let value = jit::widen(b, value, arg, sum_type);
    match (sum_type.is_float(), op) {
        (true, JitSumOp::Add) => b.ins().fadd(sum, value),
        (true, JitSumOp::Sub) => b.ins().fsub(sum, value),
        (false, JitSumOp::Add) => b.ins().iadd(sum, value),
        (false, JitSumOp::Sub) => b.ins().isub(sum, value),
    }
}

/// `state[0] = state[0] op value` in the fused loop with `A`'s arithmetic
/// ([`jit_sum_op`]), validity kept (`sticky` without overflow); false,
/// with nothing set, where `A` has no lowering or there is no value.
pub(crate) fn jit_fold_sum<A: SumArith>(
    b: &mut jit::FunctionBuilder<'_>,
    state: &mut jit::StateRow,
    value: Option<jit::Value>,
    op: JitSumOp,
) -> bool {
    let (Some(types), Some(value)) = (A::jit_types(), value) else {
        return false;
    };
    let sum = state.get(b, 0);
    state.set(0, jit_sum_op(b, types, sum, value, op));
    true
}

/// [`restarting`](super::rules::restarting) in the fused loop over state
/// `[sum, valid]`, where the sum cannot overflow: a NULL sum takes `value`
/// (`0 - value` for a retraction) and a valid one `sum op value`; valid
/// after. A sum for which
/// NULL behaves as zero (`SumArith::NULL_IS_ZERO`: it starts valid) is the
/// plain [`jit_fold_sum`]. False, with nothing set, as `jit_fold_sum`.
pub(crate) fn jit_restart_sum<A: SumArith>(
    b: &mut jit::FunctionBuilder<'_>,
    state: &mut jit::StateRow,
    value: Option<jit::Value>,
    op: JitSumOp,
) -> bool {
    if A::NULL_IS_ZERO {
        return jit_fold_sum::<A>(b, state, value, op);
    }
    let (Some(types), Some(value)) = (A::jit_types(), value) else {
        return false;
    };
    let (sum, valid) = (state.get(b, 0), state.get(b, 1));
    let total = jit_sum_op(b, types, sum, value, op);
    let fresh = match op {
        JitSumOp::Add => jit::widen(b, value, types.0, types.1),
        JitSumOp::Sub => {
            let zero = jit::zero(b, types.1);
            jit_sum_op(b, types, zero, value, op)
        }
    };
    state.set(0, b.ins().select(valid, total, fresh));
    state.set_valid(1);
    true
}

/// The lowering of a sum template over state `[sum, valid, extra...]` with
/// `fold` and, for a rule that retracts, `retract`; `None` where `A` has
/// no lowering or overflows to NULL.
pub(crate) fn jit_sum_lowering<A: SumArith>(
    extra: &[jit::Type],
    fold: jit::FoldIr,
    retract: Option<jit::FoldIr>,
) -> Option<jit::Lowering> {
    let (arg, sum) = A::jit_types().filter(|_| !A::OVERFLOWS)?;
    let mut state = vec![sum, jit::FLAG];
    state.extend_from_slice(extra);
    Some(jit::Lowering {
        arg: Some(arg),
        state,
        fold,
        retract,
    })
}

/// The lowering of a sum kept with a count over state `[sum, valid,
/// count]` (AVG; SUM over retractions when `RESTART`, whose NULL sum a
/// value restarts: [`jit_restart_sum`]): the fold adds the value and
/// counts one, the retraction subtracts both.
pub(crate) fn jit_counted_sum_lowering<A: SumArith, const RESTART: bool>() -> Option<jit::Lowering>
{
    fn step<A: SumArith, const RESTART: bool, const RETRACT: bool>(
        b: &mut jit::FunctionBuilder<'_>,
        state: &mut jit::StateRow,
        value: Option<jit::Value>,
    ) {
        let (op, count) = match RETRACT {
            false => (JitSumOp::Add, 1),
            true => (JitSumOp::Sub, -1),
        };
        let summed = match RESTART {
            true => jit_restart_sum::<A>(b, state, value, op),
            false => jit_fold_sum::<A>(b, state, value, op),
        };
        if summed {
            jit::count_step(b, state, 2, count);
        }
    }
    jit_sum_lowering::<A>(
        &[jit::COUNT],
        step::<A, RESTART, false>,
        Some(step::<A, RESTART, true>),
    )
}
