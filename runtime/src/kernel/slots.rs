//! One nullable value per group: the state of running extremes (MIN/MAX),
//! SUM and SUM0. A template in `crate::templates` supplies the per-type
//! fold as a [`SlotRule`]; these loops apply it.

use std::fmt;

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use super::bind::Binding;
use super::rows::Rows;
use super::GroupIds;
use crate::error::{AggError, Result};

/// The per-specialization rules of a one-slot state, written out by the
/// emitter for each type row.
pub trait SlotRule: 'static {
    /// Binding of the raw argument column.
    type In: Binding;
    /// Binding of the state, partial and result column.
    type Acc: Binding;
    /// Whether a fresh group starts non-NULL (SUM0 starts at zero).
    const INITIAL_VALID: bool;
    /// Whether a NULL partial makes the merged state NULL (SUM0:
    /// `plus(sum0, NULL)`); otherwise NULL partials are skipped.
    const MERGE_NULL_POISONS: bool;
    /// Value a fresh group holds (an identity where the fold is branch-free).
    fn initial() -> <Self::Acc as Binding>::Owned;
    /// An argument value whose fold leaves every state value unchanged,
    /// valid or not, or `None` when the rule has none (floats' first-value
    /// rule, strings, DECIMAL overflow to NULL). With one, unselected rows
    /// fold it branch-free (their validity change discarded) instead of
    /// being skipped.
    #[inline(always)]
    fn identity<'a>() -> Option<<Self::In as Binding>::Ref<'a>> {
        None
    }
    /// Folds one non-NULL argument value.
    fn fold(
        acc: &mut <Self::Acc as Binding>::Owned,
        valid: &mut bool,
        value: <Self::In as Binding>::Ref<'_>,
    );
    /// Retracts one non-NULL argument value (SUM0's `minus`). Only
    /// retracting specializations are handed -U/-D rows; the default,
    /// for rules without a retraction (running extremes), leaves the state
    /// as it is and is never reached, as insert-only accumulators reject
    /// retracting rows before folding.
    #[inline(always)]
    fn unfold(
        acc: &mut <Self::Acc as Binding>::Owned,
        valid: &mut bool,
        value: <Self::In as Binding>::Ref<'_>,
    ) {
        let _ = (acc, valid, value);
    }
    /// Folds one non-NULL partial value.
    fn merge(
        acc: &mut <Self::Acc as Binding>::Owned,
        valid: &mut bool,
        value: <Self::Acc as Binding>::Ref<'_>,
    );
    /// Result equality used to suppress unchanged results.
    fn same(a: <Self::Acc as Binding>::Ref<'_>, b: <Self::Acc as Binding>::Ref<'_>) -> bool;
    /// [`SlotRule::fold`] as the fused loop's IR over state `[value,
    /// valid]`; `None` where the rule has none (the static kernel runs).
    #[cfg(feature = "jit")]
    fn lowering() -> Option<crate::jit::Lowering> {
        None
    }
}

/// Columnar one-slot state: a value and a validity flag per group.
pub struct Slots<R: SlotRule> {
    values: Vec<<R::Acc as Binding>::Owned>,
    valid: Vec<bool>,
}

impl<R: SlotRule> fmt::Debug for Slots<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slots")
            .field("groups", &self.values.len())
            .finish()
    }
}

impl<R: SlotRule> Default for Slots<R> {
    fn default() -> Self {
        Slots {
            values: Vec::new(),
            valid: Vec::new(),
        }
    }
}

impl<R: SlotRule> Slots<R> {
    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no group is held.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Inline bytes per group.
    pub fn bytes_per_group() -> usize {
        std::mem::size_of::<<R::Acc as Binding>::Owned>() + 1
    }

    /// Grows (or shrinks) to `n` groups; new groups are fresh.
    pub fn resize(&mut self, n: usize) {
        self.values.resize(n, R::initial());
        self.valid.resize(n, R::INITIAL_VALID);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        self.values.clear();
        self.valid.clear();
    }

    /// The fused loop's view of the state: `[values, valid]`.
    #[cfg(feature = "jit")]
    pub fn jit_state(&mut self) -> crate::jit::StatePtrs {
        crate::jit::StatePtrs {
            columns: vec![
                self.values.as_mut_ptr().cast(),
                self.valid.as_mut_ptr().cast(),
            ],
            groups: self.values.len().min(self.valid.len()),
        }
    }

    /// Bytes held, heap included.
    pub fn memory_bytes(&self) -> usize {
        let heap: usize = self.values.iter().map(R::Acc::heap_bytes).sum();
        self.values.capacity() * std::mem::size_of::<<R::Acc as Binding>::Owned>()
            + self.valid.capacity()
            + heap
    }

    /// Folds the selected rows of a bound argument column.
    #[inline(never)]
    pub fn update(
        &mut self,
        column: <R::In as Binding>::Reader<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
    ) {
        let group_ids = groups.ids();
        let n = rows.len();
        let values = &mut self.values[..];
        let valid = &mut self.valid[..];
        if group_ids.len() != n
            || groups.num_groups() != values.len()
            || valid.len() != values.len()
            || R::In::rows(&column) < n
        {
            // Not reachable from the generated code; kept checked.
            let group_ids = &group_ids[..n];
            rows.for_each(|i| {
                let g = group_ids[i] as usize;
                R::fold(&mut values[g], &mut valid[g], R::In::get(&column, i));
            });
            return;
        }
        // Bounds of the unchecked accesses below, by the checks above: the
        // walks yield only row indices `i < n` (`Rows::new` checks its mask
        // is `n` bits), and `n == group_ids.len() <= R::In::rows(&column)`;
        // every group id is below `groups.num_groups()` (`check_groups`, the
        // only constructor of `GroupIds`, checked each one), which equals
        // `values.len()` and `valid.len()`.
        match R::identity() {
            Some(identity) if !rows.is_dense() => {
                // Branch-free: unselected rows fold the identity (a no-op on
                // value and validity); the validity update is kept only for
                // selected rows.
                // SAFETY: `i < n == group_ids.len()` and `i < n <= R::In::rows(&column)`
                // (`get_unchecked`'s requirement); `g` is a checked id, below
                // `num_groups`, the length of every state vector indexed (see above).
                rows.for_each_bit(|i, bit| unsafe {
                    let g = *group_ids.get_unchecked(i) as usize;
                    let read = R::In::get_unchecked(&column, i);
                    let value = if bit { read } else { identity };
                    let slot_valid = valid.get_unchecked_mut(g);
                    let mut folded = *slot_valid;
                    R::fold(values.get_unchecked_mut(g), &mut folded, value);
                    *slot_valid = if bit { folded } else { *slot_valid };
                });
            }
            // SAFETY: `i < n == group_ids.len()` and `i < n <= R::In::rows(&column)`
            // (`get_unchecked`'s requirement); `g` is a checked id, below
            // `num_groups`, the length of every state vector indexed (see above).
            _ => rows.for_each(|i| unsafe {
                let g = *group_ids.get_unchecked(i) as usize;
                R::fold(
                    values.get_unchecked_mut(g),
                    valid.get_unchecked_mut(g),
                    R::In::get_unchecked(&column, i),
                );
            }),
        }
    }

    /// Folds the selected rows in order, retracting ([`SlotRule::unfold`])
    /// the rows `kinds` marks -U/-D.
    // Kept out of line: inlined next to `update`, its loop raised the
    // register pressure of the insert-only loop (a reload per row).
    #[inline(never)]
    pub fn update_signed(
        &mut self,
        column: <R::In as Binding>::Reader<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
        kinds: &[i8],
    ) {
        let group_ids = groups.ids();
        let n = rows.len();
        if group_ids.len() != n
            || groups.num_groups() != self.values.len()
            || self.valid.len() != self.values.len()
            || R::In::rows(&column) < n
            || kinds.len() < n
        {
            // Not reachable from the generated code; kept checked.
            rows.for_each(|i| self.fold_row(&column, i, group_ids[i] as usize, kinds.get(i)));
            return;
        }
        let values = &mut self.values[..];
        let valid = &mut self.valid[..];
        // SAFETY: the walk yields only `i < n` (`Rows::new` checks its mask is
        // `n` bits), and `n == group_ids.len() <= R::In::rows(&column)`,
        // `n <= kinds.len()` (checked above); `g` is a checked id (`check_groups`,
        // the only constructor of `GroupIds`), below `num_groups`, which equals
        // `values.len()` and `valid.len()`.
        rows.for_each(|i| unsafe {
            let g = *group_ids.get_unchecked(i) as usize;
            let value = R::In::get_unchecked(&column, i);
            let (slot, slot_valid) = (values.get_unchecked_mut(g), valid.get_unchecked_mut(g));
            if super::is_retract(*kinds.get_unchecked(i)) {
                R::unfold(slot, slot_valid, value);
            } else {
                R::fold(slot, slot_valid, value);
            }
        });
    }

    #[inline(always)]
    fn fold_row(
        &mut self,
        column: &<R::In as Binding>::Reader<'_>,
        i: usize,
        g: usize,
        kind: Option<&i8>,
    ) {
        let (value, valid) = (&mut self.values[g], &mut self.valid[g]);
        if kind.is_some_and(|&k| super::is_retract(k)) {
            R::unfold(value, valid, R::In::get(column, i));
        } else {
            R::fold(value, valid, R::In::get(column, i));
        }
    }

    /// Resets the listed groups to a fresh state.
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            let g = g as usize;
            if g < self.values.len() {
                self.values[g] = R::initial();
                self.valid[g] = R::INITIAL_VALID;
            }
        }
    }

    /// Folds like [`Slots::update`] and returns each row's result right
    /// after it; sets `changed[row]` when that result differs from the one
    /// before under [`SlotRule::same`].
    #[allow(clippy::too_many_arguments)]
    pub fn update_traced(
        &mut self,
        column: <R::In as Binding>::Reader<'_>,
        rows: &Rows,
        group_ids: &[u32],
        kinds: Option<&[i8]>,
        changed: &mut [bool],
        result_type: &DataType,
        name: &str,
    ) -> Result<ArrayRef> {
        if changed.len() < rows.len() {
            return Err(AggError::Input(format!(
                "{name}: changed flags hold {} rows, batch has {}",
                changed.len(),
                rows.len()
            )));
        }
        let mut out = Vec::with_capacity(rows.len());
        let mut out_valid = Vec::with_capacity(rows.len());
        for (i, &g) in group_ids[..rows.len()].iter().enumerate() {
            let g = g as usize;
            let differs = if rows.selected(i) {
                let before = (self.valid[g], self.values[g].clone());
                self.fold_row(&column, i, g, kinds.and_then(|k| k.get(i)));
                !self.same_as(g, before.0, &before.1)
            } else {
                !self.same_as(g, self.valid[g], &self.values[g])
            };
            changed[i] |= differs;
            out.push(self.values[g].clone());
            out_valid.push(self.valid[g]);
        }
        R::Acc::build(out, out_valid, result_type)
    }

    fn same_as(&self, g: usize, valid: bool, value: &<R::Acc as Binding>::Owned) -> bool {
        match (self.valid[g], valid) {
            (true, true) => R::same(R::Acc::view(&self.values[g]), R::Acc::view(value)),
            (false, false) => true,
            _ => false,
        }
    }

    /// Merges a partial column into the given groups.
    pub fn merge(&mut self, partial: &ArrayRef, group_ids: &[u32], name: &str) -> Result<()> {
        let column_column = R::Acc::prepare(partial)?;
        let column = R::Acc::bind(&column_column, name)?;
        let len = group_ids.len();
        let nulls = partial.nulls().filter(|n| n.null_count() > 0);
        let values = &mut self.values[..];
        let valid = &mut self.valid[..];
        match nulls {
            None => {
                for (i, &g) in group_ids.iter().enumerate() {
                    let g = g as usize;
                    R::merge(&mut values[g], &mut valid[g], R::Acc::get(&column, i));
                }
            }
            Some(nulls) => {
                for (i, &g) in group_ids[..len].iter().enumerate() {
                    let g = g as usize;
                    if nulls.is_valid(i) {
                        R::merge(&mut values[g], &mut valid[g], R::Acc::get(&column, i));
                    } else if R::MERGE_NULL_POISONS {
                        valid[g] = false;
                    }
                }
            }
        }
        Ok(())
    }

    /// The value column (result, partial and snapshot alike) of the listed
    /// groups.
    pub fn evaluate(&self, groups: &[u32], data_type: &DataType, name: &str) -> Result<ArrayRef> {
        let mut out = Vec::with_capacity(groups.len());
        let mut out_valid = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = super::group_index(g, self.values.len(), name)?;
            out.push(self.values[g].clone());
            out_valid.push(self.valid[g]);
        }
        R::Acc::build(out, out_valid, data_type)
    }

    /// Sets the listed groups from a value column (as
    /// [`Slots::evaluate`] wrote it).
    pub fn restore(&mut self, column: &ArrayRef, groups: &[u32], name: &str) -> Result<()> {
        let reader_column = R::Acc::prepare(column)?;
        let reader = R::Acc::bind(&reader_column, name)?;
        for (i, &g) in groups.iter().enumerate() {
            let g = super::group_index(g, self.values.len(), name)?;
            if column.is_valid(i) {
                R::Acc::store(&mut self.values[g], R::Acc::get(&reader, i));
                self.valid[g] = true;
            } else {
                self.values[g] = R::initial();
                self.valid[g] = false;
            }
        }
        Ok(())
    }

    /// Sets `changed[i]` where `before[i]` and `after[i]` differ under
    /// [`SlotRule::same`] (NULL equals NULL).
    pub fn mark_changed(
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
        name: &str,
    ) -> Result<()> {
        super::mark_changed_with::<R::Acc>(before, after, changed, name, R::same)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{Array, ArrayRef, Int32Array};

    use super::*;
    use crate::kernel::{check_groups, Prim};

    /// MIN over INT, as the registry instantiates it.
    type MinInt = crate::templates::running_extreme::RunningExtreme<
        crate::templates::rules::TotalOrder<Prim<Int32Type>>,
        crate::templates::rules::Min,
        crate::templates::rules::JavaEq,
    >;

    #[test]
    fn masked_identity_fold_matches_a_per_row_model() {
        let len = 300usize;
        let groups: Vec<u32> = (0..len as u32).map(|i| (i * 7 + i / 5) % 9).collect();
        // Group 8 only ever sees NULLs, so it must stay NULL.
        let values: Vec<Option<i32>> = (0..len)
            .map(|i| {
                let v = (i as i32 * 7919) % 1000 - 500;
                (i % 8 != 3 && groups[i] != 8).then_some(v)
            })
            .collect();
        let column: ArrayRef = Arc::new(Int32Array::from(values.clone()));
        for offset in [0usize, 3, 64] {
            let column = column.slice(offset, len - offset);
            let ids = &groups[offset..];
            let rows = Rows::new(ids.len(), column.nulls(), None, "t").unwrap();
            assert!(!rows.is_dense());
            let mut slots = Slots::<MinInt>::default();
            slots.resize(10);
            let reader = Prim::<Int32Type>::bind(&column, "t").unwrap();
            let checked = check_groups(ids, 10, "t").unwrap();
            slots.update(reader, &rows, &checked);
            let mut want = [None::<i32>; 10];
            for (i, &g) in ids.iter().enumerate() {
                if let Some(v) = values[offset + i] {
                    let slot = &mut want[g as usize];
                    *slot = Some(slot.map_or(v, |m| m.min(v)));
                }
            }
            for (g, want) in want.iter().enumerate() {
                let got = slots.valid[g].then_some(slots.values[g]);
                assert_eq!(got, *want, "group {g} offset {offset}");
            }
            assert!(!slots.valid[8] && !slots.valid[9]);
        }
    }

    #[test]
    fn mismatched_group_bound_takes_the_checked_loop() {
        let column: ArrayRef = Arc::new(Int32Array::from(vec![Some(4), None, Some(2)]));
        let rows = Rows::new(3, column.nulls(), None, "t").unwrap();
        let reader = Prim::<Int32Type>::bind(&column, "t").unwrap();
        let ids = [1u32, 0, 1];
        // Checked against 2 groups, while the state holds 3: still correct.
        let checked = check_groups(&ids, 2, "t").unwrap();
        let mut slots = Slots::<MinInt>::default();
        slots.resize(3);
        slots.update(reader, &rows, &checked);
        assert_eq!((slots.valid[1], slots.values[1]), (true, 2));
        assert!(!slots.valid[0]);
    }
}
