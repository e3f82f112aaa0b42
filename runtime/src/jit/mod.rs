//! The Cranelift JIT (feature `jit`): one machine-code loop per batch for
//! all the fixed-width calls of a plan, instead of one kernel per call.
//!
//! The static path runs each call's kernel over the whole batch: every
//! kernel reads the group ids, its argument column and its validity again.
//! The fused loop ([`emit`]) reads each group id, argument column,
//! validity bitmap and FILTER column once per row and applies every call's
//! update to its state in place. What each call's update is comes from the
//! call's rule: each rule's Cranelift lowering ([`Lowering`]) sits beside
//! its Rust implementation in `crate::templates` and `crate::kernel`, so
//! one function's semantics stay in one place.
//!
//! A plan is fused when [`JitMode`] asks for it and its shape allows
//! ([`fused::Fused::plan`]); calls without a lowering (strings, DECIMAL(38),
//! DISTINCT, ...) keep their static kernels in the same batch. Compiled
//! code is cached by shape ([`emit::compile`]). Any failure to compile
//! leaves the plan on the static kernels with the reason recorded.

pub mod emit;
pub mod fused;

use std::any::TypeId;

pub use cranelift_codegen::ir::types::Type;
pub use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData};
pub use cranelift_frontend::FunctionBuilder;
pub use emit::{compile, compile_listing, compile_uncached, Compiled, Shape};
pub use fused::Fused;

/// One row's fold of a selected (non-NULL, FILTER-passing) argument value,
/// as Cranelift IR: reads the group's state values it needs from the
/// [`StateRow`] and sets the new ones; the argument value is `None` for
/// COUNT(*) and COUNT's validity-only reads. The emitter keeps the old
/// values for rows that are not selected.
pub type FoldIr = fn(&mut FunctionBuilder<'_>, &mut StateRow, Option<Value>);

/// How a rule's update looks to the fused loop: fixed-width state columns
/// (one value per group each) and the folds that update them.
#[derive(Clone)]
pub struct Lowering {
    /// Cranelift type of the argument carrier (`None`: COUNT(*)).
    pub arg: Option<Type>,
    /// Cranelift types of the state columns, in the order
    /// `TemplateState::jit_state` hands out their base pointers (a
    /// validity flag is an `I8` of 0 or 1).
    pub state: Vec<Type>,
    /// The fold of one selected +I/+U row.
    pub fold: FoldIr,
    /// The fold of one selected -U/-D row (the rule's retraction), where
    /// the rule has one; `None` keeps the call off loops that read row
    /// kinds.
    pub retract: Option<FoldIr>,
}

/// The retraction of a call that ignores -U/-D rows (an insert-only
/// function next to retracting ones, whose retract Flink makes a no-op):
/// writes nothing.
pub fn skip_retraction(_: &mut FunctionBuilder<'_>, _: &mut StateRow, _: Option<Value>) {}

impl std::fmt::Debug for Lowering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lowering")
            .field("arg", &self.arg)
            .field("state", &self.state)
            .field("retracts", &self.retract.is_some())
            .finish()
    }
}

/// One group's state columns within the fused loop's row: loaded on first
/// [`StateRow::get`], written back by the emitter after the fold.
#[derive(Debug)]
pub struct StateRow {
    addrs: Vec<Value>,
    types: Vec<Type>,
    flags: MemFlagsData,
    loaded: Vec<Option<Value>>,
    pub(crate) writes: Vec<Write>,
}

/// What the fold wrote to one state column.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Write {
    /// Unchanged.
    None,
    /// A new value.
    Value(Value),
    /// A validity flag set to true.
    Valid,
}

impl StateRow {
    pub(crate) fn new(addrs: Vec<Value>, types: Vec<Type>, flags: MemFlagsData) -> StateRow {
        let n = addrs.len();
        StateRow {
            addrs,
            types,
            flags,
            loaded: vec![None; n],
            writes: vec![Write::None; n],
        }
    }

    /// The value of state column `k` before this row.
    pub fn get(&mut self, b: &mut FunctionBuilder<'_>, k: usize) -> Value {
        match self.loaded[k] {
            Some(v) => v,
            None => {
                let v = b.ins().load(self.types[k], self.flags, self.addrs[k], 0);
                self.loaded[k] = Some(v);
                v
            }
        }
    }

    /// Sets state column `k` to `value`.
    pub fn set(&mut self, k: usize, value: Value) {
        self.writes[k] = Write::Value(value);
    }

    /// Sets the validity flag in state column `k` (a `FLAG`).
    pub fn set_valid(&mut self, k: usize) {
        self.writes[k] = Write::Valid;
    }

    pub(crate) fn addr(&self, k: usize) -> Value {
        self.addrs[k]
    }
}

/// Base pointers of one call's state columns (in [`Lowering::state`]
/// order) and the number of groups each holds.
#[derive(Debug, Clone)]
pub struct StatePtrs {
    /// Base pointer of each state column.
    pub columns: Vec<*mut u8>,
    /// Groups held by every column.
    pub groups: usize,
}

/// The Cranelift type of a fixed-width carrier value `V` the fused loop
/// handles (the integers and floats of `types.toml`), `None` for others
/// (i128, timestamps, strings), which stay on the static kernels.
pub fn carrier<V: 'static>() -> Option<Type> {
    use cranelift_codegen::ir::types::{F32, F64, I16, I32, I64, I8};
    let id = TypeId::of::<V>();
    [
        (TypeId::of::<i8>(), I8),
        (TypeId::of::<i16>(), I16),
        (TypeId::of::<i32>(), I32),
        (TypeId::of::<i64>(), I64),
        (TypeId::of::<f32>(), F32),
        (TypeId::of::<f64>(), F64),
    ]
    .into_iter()
    .find_map(|(t, ty)| (t == id).then_some(ty))
}

/// `value` converted from carrier type `from` to the wider carrier `to`
/// of the same kind (sign-extended integers, promoted floats): a sum's
/// widening of its argument.
pub fn widen(b: &mut FunctionBuilder<'_>, value: Value, from: Type, to: Type) -> Value {
    if from == to {
        return value;
    }
    if to.is_float() {
        b.ins().fpromote(to, value)
    } else {
        b.ins().sextend(to, value)
    }
}

/// Zero of carrier type `ty` (`0.0` for floats).
pub fn zero(b: &mut FunctionBuilder<'_>, ty: Type) -> Value {
    use cranelift_codegen::ir::types::{F32, F64};
    match ty {
        F32 => b.ins().f32const(0.0),
        F64 => b.ins().f64const(0.0),
        _ => b.ins().iconst(ty, 0),
    }
}

/// `state[k] += step` for a count column (`i64`, wrapping as Java longs).
pub fn count_step(b: &mut FunctionBuilder<'_>, state: &mut StateRow, k: usize, step: i64) {
    let count = state.get(b, k);
    state.set(k, b.ins().iadd_imm_s(count, step));
}

/// The type of a validity flag in state (`bool`: 0 or 1).
pub const FLAG: Type = cranelift_codegen::ir::types::I8;

/// The type of a count in state (`i64`).
pub const COUNT: Type = cranelift_codegen::ir::types::I64;
