//! `first_last`: FIRST_VALUE and LAST_VALUE over insert-only input (Flink's
//! FirstValueAggFunction / LastValueAggFunction): one value per group, the
//! first non-NULL value that arrived (FIRST_VALUE) or the latest
//! (LAST_VALUE). Rows fold in arrival order, in immediate and mini-batch
//! mode alike, as Flink accumulates them.
//!
//! Flink's accumulator is `(value, order)` with the order a wall-clock time
//! (`System.currentTimeMillis()`) that only decides whether a value is
//! held yet; its merge is not implemented, so Flink never splits these
//! calls into two phases, and our state keeps the value alone.
//!
//! State: [`Slots`](crate::kernel::Slots) of this rule.
//!
//! Declaration, read by aggforge-codegen:
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["FIRST_VALUE", "LAST_VALUE"]
//! input = ["insert_only"]
//! input_reason = """over retracting input Flink keeps every live value with its arrival order \
//! (FirstValueWithRetractAggFunction), which no template here holds yet"""
//! phases = ["single"]
//! phases_reason = "Flink's FIRST_VALUE and LAST_VALUE have no merge, so its planner never splits them"
//! partial = [{ name = "value", type = "arg" }]
//! result = "arg"
//! ```

use std::marker::PhantomData;

use super::rules::Equality;
use crate::kernel::{Binding, SlotRule};

/// Which value of the arrival order a call keeps.
pub trait Position: 'static {
    /// Whether the first value stays (FIRST_VALUE); else the latest wins.
    const FIRST: bool;
}

/// FIRST_VALUE: the first non-NULL value stays.
#[derive(Debug)]
pub struct First;

/// LAST_VALUE: each non-NULL value replaces the one held.
#[derive(Debug)]
pub struct Last;

impl Position for First {
    const FIRST: bool = true;
}

impl Position for Last {
    const FIRST: bool = false;
}

/// The first or last value (`P`) of binding `B`, results compared under
/// `E`.
#[derive(Debug)]
pub struct FirstLast<B, P, E>(PhantomData<(B, P, E)>);

impl<B: Binding, P: Position, E: Equality<B>> SlotRule for FirstLast<B, P, E> {
    type In = B;
    type Acc = B;
    const INITIAL_VALID: bool = false;
    const MERGE_NULL_POISONS: bool = false;

    #[inline(always)]
    fn initial() -> B::Owned {
        B::Owned::default()
    }

    #[inline(always)]
    fn fold(acc: &mut B::Owned, valid: &mut bool, value: B::Ref<'_>) {
        if !(P::FIRST && *valid) {
            B::store(acc, value);
            *valid = true;
        }
    }

    /// Never reached: the planner does not split these calls (single phase
    /// only); a merge would take the partial as one more value.
    #[inline(always)]
    fn merge(acc: &mut B::Owned, valid: &mut bool, value: B::Ref<'_>) {
        Self::fold(acc, valid, value)
    }

    #[inline(always)]
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool {
        E::same(a, b)
    }
}
