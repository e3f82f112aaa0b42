//! `counted_extreme`: MIN and MAX over retracting input (Flink's
//! MinWithRetractAggFunction / MaxWithRetractAggFunction): a counted
//! multiset of the values per group, so retracting the extreme finds the
//! next one. Flink's two-phase accumulator holds the map in a MapView,
//! which has no Arrow partial layout here: single phase only.
//!
//! Declaration: functions MIN, MAX; retracting input; phase single; result
//! `arg`; no parameters. State:
//! [`CountedExtremes`](crate::kernel::CountedExtremes) of this rule, ordered
//! by the carrier's Java order (`kernel::multiset::JavaOrd`).

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
