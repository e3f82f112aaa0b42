//! `first_last_retract`: FIRST_VALUE and LAST_VALUE over retracting input
//! (Flink's FirstValueWithRetractAggFunction /
//! LastValueWithRetractAggFunction): the live values of each group in
//! arrival order; a retraction removes the earliest live arrival of an
//! equal value. Like their insert-only forms they have no merge, so Flink
//! never splits them into two phases.
//!
//! State: [`ArrivalLists`](crate::kernel::ArrivalLists) of this rule.
//!
//! Declaration, read by aggforge-codegen:
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["FIRST_VALUE", "LAST_VALUE"]
//! input = ["retracting"]
//! input_reason = "insert-only FIRST_VALUE/LAST_VALUE keep one value per group, template first_last"
//! phases = ["single"]
//! phases_reason = "Flink's FIRST_VALUE and LAST_VALUE have no merge, so its planner never splits them"
//! result = "arg"
//! ```

use std::marker::PhantomData;

use super::first_last::Position;
use super::rules::Equality;
use crate::kernel::{ArrivalRule, Binding};

/// The first or last (`P`) live value of binding `B`, results compared
/// under `E`.
#[derive(Debug)]
pub struct FirstLastRetract<B, P, E>(PhantomData<(B, P, E)>);

impl<B: Binding, P: Position, E: Equality<B>> ArrivalRule for FirstLastRetract<B, P, E> {
    type Val = B;
    const FIRST: bool = P::FIRST;

    #[inline(always)]
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool {
        E::same(a, b)
    }
}
