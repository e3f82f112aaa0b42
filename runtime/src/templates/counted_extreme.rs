//! `counted_extreme`: MIN and MAX over retracting input (Flink's
//! MinWithRetractAggFunction / MaxWithRetractAggFunction): a counted
//! multiset of the values per group, so retracting the extreme finds the
//! next one.
//!
//! State: [`CountedExtremes`](crate::kernel::CountedExtremes) of this rule, ordered
//! by the carrier's Java order (`kernel::multiset::JavaOrd`). Two-phase:
//! Flink's accumulator `(min | max, mapSize, map MapView)` is one struct
//! partial column, merged as Flink's `merge` does
//! (`kernel::counted_partial`).
//!
//! Declaration, read by aggforge-codegen: spec entries name only functions,
//! input, distinct, types and phases; the template is chosen by function and
//! input, and its partial layout (Flink's field order), result type and
//! parameters come from here, per numeric class where they differ.
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["MIN", "MAX"]
//! input = ["retracting"]
//! input_reason = "insert-only MIN/MAX keep one running extreme, template running_extreme"
//! distinct_view = true
//! phases = ["single", "local", "global"]
//! result = "arg"
//! partial = [{ name = "acc", type = "accumulator" }]
//! ```

use std::marker::PhantomData;

use super::rules::{Direction, Equality};
use crate::kernel::{Binding, MultisetRule};

/// The counted extreme of binding `B` in direction `D`, results compared
/// under `E`.
#[derive(Debug)]
pub struct CountedExtreme<B, D, E>(PhantomData<(B, D, E)>);

impl<B: Binding, D: Direction, E: Equality<B>> MultisetRule for CountedExtreme<B, D, E> {
    type Val = B;
    const MIN: bool = D::MIN;

    #[inline(always)]
    fn same(a: B::Ref<'_>, b: B::Ref<'_>) -> bool {
        E::same(a, b)
    }
}
