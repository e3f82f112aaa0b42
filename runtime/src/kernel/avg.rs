//! AVG state: a sum (NULL once a DECIMAL sum overflowed) and a count per
//! group. The generated struct supplies the sum arithmetic and the final
//! division as an [`AvgRule`].

use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array};
use arrow_schema::DataType;

use super::bind::Binding;
use super::rows::Rows;
use super::GroupIds;
use crate::error::{AggError, Result};

/// Scales an AVG division needs (0 for non-decimal types).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scales {
    /// Scale of the sum.
    pub sum: i8,
    /// Scale of the result.
    pub result: i8,
}

/// The per-specialization rules of AVG, written out by the emitter.
pub trait AvgRule: 'static {
    /// Binding of the raw argument column.
    type In: Binding;
    /// Binding of the sum (state and partial field `sum`).
    type Sum: Binding;
    /// Binding of the result column.
    type Out: Binding;
    /// The sum a fresh group starts with.
    fn zero() -> <Self::Sum as Binding>::Owned;
    /// An argument value whose [`AvgRule::add`] leaves every sum and
    /// validity unchanged, or `None` when the rule has none. With one,
    /// unselected rows add it (and 0 to the count) branch-free instead of
    /// being skipped.
    #[inline(always)]
    fn identity<'a>() -> Option<<Self::In as Binding>::Ref<'a>> {
        None
    }
    /// Adds one non-NULL argument value; clears `valid` on overflow to NULL.
    fn add(
        sum: &mut <Self::Sum as Binding>::Owned,
        valid: &mut bool,
        value: <Self::In as Binding>::Ref<'_>,
    );
    /// Retracts one non-NULL argument value (Flink's retract `minus`).
    fn sub(
        sum: &mut <Self::Sum as Binding>::Owned,
        valid: &mut bool,
        value: <Self::In as Binding>::Ref<'_>,
    );
    /// Whether a fresh group's sum is valid (AVG starts at zero); SUM with
    /// retraction starts NULL and its first value restarts it.
    const INITIAL_VALID: bool = true;
    /// Whether a NULL partial sum makes the merged sum NULL (AVG's
    /// `plus(sum, NULL)`); otherwise NULL partial sums are skipped (SUM
    /// with retraction).
    const MERGE_NULL_POISONS: bool = true;
    /// Adds one non-NULL partial sum; clears `valid` on overflow to NULL.
    fn merge(
        sum: &mut <Self::Sum as Binding>::Owned,
        valid: &mut bool,
        value: <Self::Sum as Binding>::Ref<'_>,
    );
    /// `sum / count` as the result type (count is non-zero); `None` is NULL.
    fn finish(
        sum: <Self::Sum as Binding>::Ref<'_>,
        count: i64,
        scales: Scales,
    ) -> Option<<Self::Out as Binding>::Owned>;
    /// Result equality used to suppress unchanged results.
    fn same(a: <Self::Out as Binding>::Ref<'_>, b: <Self::Out as Binding>::Ref<'_>) -> bool;
    /// [`AvgRule::add`] and the count's increment as the fused loop's IR
    /// over state `[sum, valid, count]`; `None` where the rule has none.
    #[cfg(feature = "jit")]
    fn lowering() -> Option<crate::jit::Lowering> {
        None
    }
}

/// Columnar AVG state.
pub struct AvgState<R: AvgRule> {
    sums: Vec<<R::Sum as Binding>::Owned>,
    valid: Vec<bool>,
    counts: Vec<i64>,
}

impl<R: AvgRule> fmt::Debug for AvgState<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AvgState")
            .field("groups", &self.sums.len())
            .finish()
    }
}

impl<R: AvgRule> Default for AvgState<R> {
    fn default() -> Self {
        AvgState {
            sums: Vec::new(),
            valid: Vec::new(),
            counts: Vec::new(),
        }
    }
}

impl<R: AvgRule> AvgState<R> {
    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// True when no group is held.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Inline bytes per group.
    pub fn bytes_per_group() -> usize {
        std::mem::size_of::<<R::Sum as Binding>::Owned>() + 1 + 8
    }

    /// Grows to `n` groups; new groups hold a zero sum and count.
    pub fn resize(&mut self, n: usize) {
        self.sums.resize(n, R::zero());
        self.valid.resize(n, R::INITIAL_VALID);
        self.counts.resize(n, 0);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        self.sums.clear();
        self.valid.clear();
        self.counts.clear();
    }

    /// The fused loop's view of the state: `[sums, valid, counts]`.
    #[cfg(feature = "jit")]
    pub fn jit_state(&mut self) -> crate::jit::StatePtrs {
        crate::jit::StatePtrs {
            columns: vec![
                self.sums.as_mut_ptr().cast(),
                self.valid.as_mut_ptr().cast(),
                self.counts.as_mut_ptr().cast(),
            ],
            groups: self.sums.len().min(self.valid.len()).min(self.counts.len()),
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.sums.capacity() * std::mem::size_of::<<R::Sum as Binding>::Owned>()
            + self.valid.capacity()
            + self.counts.capacity() * 8
    }

    /// Folds the selected rows of a bound argument column.
    #[inline(always)]
    pub fn update(
        &mut self,
        column: <R::In as Binding>::Reader<'_>,
        rows: &Rows,
        groups: &GroupIds<'_>,
    ) {
        let group_ids = groups.ids();
        let n = rows.len();
        let sums = &mut self.sums[..];
        let valid = &mut self.valid[..];
        let counts = &mut self.counts[..];
        if group_ids.len() != n
            || groups.num_groups() != sums.len()
            || valid.len() != sums.len()
            || counts.len() != sums.len()
            || R::In::rows(&column) < n
        {
            // Not reachable from the generated code; kept checked.
            let group_ids = &group_ids[..n];
            rows.for_each(|i| {
                let g = group_ids[i] as usize;
                R::add(&mut sums[g], &mut valid[g], R::In::get(&column, i));
                counts[g] = counts[g].wrapping_add(1);
            });
            return;
        }
        // Bounds of the unchecked accesses below, by the checks above: the
        // walks yield only row indices `i < n` (`Rows::new` checks its mask
        // is `n` bits), and `n == group_ids.len() <= R::In::rows(&column)`;
        // every group id is below `groups.num_groups()` (`check_groups`, the
        // only constructor of `GroupIds`, checked each one), which equals
        // `sums.len()`, `valid.len()` and `counts.len()`.
        match R::identity() {
            Some(identity) if !rows.is_dense() => {
                // SAFETY: `i < n == group_ids.len()` and `i < n <= R::In::rows(&column)`
                // (`get_unchecked`'s requirement); `g` is a checked id, below
                // `num_groups`, the length of every state vector indexed (see above).
                rows.for_each_bit(|i, bit| unsafe {
                    let g = *group_ids.get_unchecked(i) as usize;
                    let read = R::In::get_unchecked(&column, i);
                    let value = if bit { read } else { identity };
                    R::add(sums.get_unchecked_mut(g), valid.get_unchecked_mut(g), value);
                    let count = counts.get_unchecked_mut(g);
                    *count = count.wrapping_add(i64::from(bit));
                });
            }
            // SAFETY: `i < n == group_ids.len()` and `i < n <= R::In::rows(&column)`
            // (`get_unchecked`'s requirement); `g` is a checked id, below
            // `num_groups`, the length of every state vector indexed (see above).
            _ => rows.for_each(|i| unsafe {
                let g = *group_ids.get_unchecked(i) as usize;
                R::add(
                    sums.get_unchecked_mut(g),
                    valid.get_unchecked_mut(g),
                    R::In::get_unchecked(&column, i),
                );
                let count = counts.get_unchecked_mut(g);
                *count = count.wrapping_add(1);
            }),
        }
    }

    /// Folds the selected rows in order; rows `kinds` marks -U/-D are
    /// retracted ([`AvgRule::sub`], count - 1).
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
            || groups.num_groups() != self.sums.len()
            || self.valid.len() != self.sums.len()
            || self.counts.len() != self.sums.len()
            || R::In::rows(&column) < n
            || kinds.len() < n
        {
            // Not reachable from the generated code; kept checked.
            rows.for_each(|i| self.fold_row(&column, i, group_ids[i] as usize, kinds.get(i)));
            return;
        }
        let sums = &mut self.sums[..];
        let valid = &mut self.valid[..];
        let counts = &mut self.counts[..];
        // SAFETY: the walk yields only `i < n` (`Rows::new` checks its mask is
        // `n` bits), and `n == group_ids.len() <= R::In::rows(&column)`,
        // `n <= kinds.len()` (checked above); `g` is a checked id (`check_groups`,
        // the only constructor of `GroupIds`), below `num_groups`, which equals
        // `sums.len()`, `valid.len()` and `counts.len()`.
        rows.for_each(|i| unsafe {
            let g = *group_ids.get_unchecked(i) as usize;
            let value = R::In::get_unchecked(&column, i);
            let (sum, sum_valid) = (sums.get_unchecked_mut(g), valid.get_unchecked_mut(g));
            let count = counts.get_unchecked_mut(g);
            if super::is_retract(*kinds.get_unchecked(i)) {
                R::sub(sum, sum_valid, value);
                *count = count.wrapping_sub(1);
            } else {
                R::add(sum, sum_valid, value);
                *count = count.wrapping_add(1);
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
        let (sum, valid) = (&mut self.sums[g], &mut self.valid[g]);
        if kind.is_some_and(|&k| super::is_retract(k)) {
            R::sub(sum, valid, R::In::get(column, i));
            self.counts[g] = self.counts[g].wrapping_sub(1);
        } else {
            R::add(sum, valid, R::In::get(column, i));
            self.counts[g] = self.counts[g].wrapping_add(1);
        }
    }

    /// Resets the listed groups to a zero sum and count.
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            let g = g as usize;
            if g < self.sums.len() {
                self.sums[g] = R::zero();
                self.valid[g] = R::INITIAL_VALID;
                self.counts[g] = 0;
            }
        }
    }

    fn result(&self, g: usize, scales: Scales) -> Option<<R::Out as Binding>::Owned> {
        if self.counts[g] == 0 || !self.valid[g] {
            None
        } else {
            R::finish(R::Sum::view(&self.sums[g]), self.counts[g], scales)
        }
    }

    /// Folds like [`AvgState::update`] and returns each row's result right
    /// after it, setting `changed` where it differs from the one before.
    #[allow(clippy::too_many_arguments)]
    pub fn update_traced(
        &mut self,
        column: <R::In as Binding>::Reader<'_>,
        rows: &Rows,
        group_ids: &[u32],
        kinds: Option<&[i8]>,
        changed: &mut [bool],
        scales: Scales,
        result_type: &DataType,
        name: &str,
    ) -> Result<ArrayRef> {
        super::trace_rows::<R::Out>(
            rows,
            group_ids,
            changed,
            name,
            result_type,
            R::same,
            |i, g, selected| {
                let before = self.result(g, scales);
                if selected {
                    self.fold_row(&column, i, g, kinds.and_then(|k| k.get(i)));
                }
                (before, self.result(g, scales))
            },
        )
    }

    /// Merges partial columns `[sum, count]` into the groups of checked
    /// ids (all or nothing: nothing in the loop can fail).
    pub fn merge(
        &mut self,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
        name: &str,
    ) -> Result<()> {
        let [sum_column, count_column] = partials else {
            return Err(AggError::Input(format!(
                "{name}: expected partial columns [sum, count], got {}",
                partials.len()
            )));
        };
        let ids = groups.ids();
        let len = ids.len();
        if groups.num_groups() != self.sums.len()
            || sum_column.len() < len
            || count_column.len() < len
        {
            return Err(AggError::Input(format!(
                "{name}: {len} partial rows for {} checked groups, state holds {}",
                groups.num_groups(),
                self.sums.len()
            )));
        }
        let sums_in_column = R::Sum::prepare(sum_column)?;
        let sums_in = R::Sum::bind(&sums_in_column, name)?;
        let counts_in = count_array(count_column, name)?;
        let counts = counts_in.values();
        let sum_nulls = sum_column.nulls().filter(|n| n.null_count() > 0);
        let count_nulls = counts_in.nulls().filter(|n| n.null_count() > 0);
        let (sums, valid, totals) = (
            &mut self.sums[..],
            &mut self.valid[..],
            &mut self.counts[..],
        );
        for (i, &g) in ids.iter().enumerate() {
            // `check_groups` built `groups` and checked every id below
            // `num_groups`, which equals the state's length (checked above),
            // so these indexes are in bounds and never panic.
            let g = g as usize;
            if sum_nulls.is_none_or(|n| n.is_valid(i)) {
                R::merge(&mut sums[g], &mut valid[g], R::Sum::get(&sums_in, i));
            } else if R::MERGE_NULL_POISONS {
                valid[g] = false;
            }
            if count_nulls.is_none_or(|n| n.is_valid(i)) {
                totals[g] = totals[g].wrapping_add(counts[i]);
            }
        }
        Ok(())
    }

    /// The results of the listed groups.
    pub fn evaluate(
        &self,
        groups: &[u32],
        scales: Scales,
        result_type: &DataType,
        name: &str,
    ) -> Result<ArrayRef> {
        let mut out = Vec::with_capacity(groups.len());
        let mut out_valid = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = super::group_index(g, self.sums.len(), name)?;
            let value = self.result(g, scales);
            out_valid.push(value.is_some());
            out.push(value.unwrap_or_default());
        }
        R::Out::build(out, out_valid, result_type)
    }

    /// The partial (and snapshot) columns `[sum, count]` of the listed groups.
    pub fn partials(
        &self,
        groups: &[u32],
        sum_type: &DataType,
        name: &str,
    ) -> Result<Vec<ArrayRef>> {
        let mut sums = Vec::with_capacity(groups.len());
        let mut valid = Vec::with_capacity(groups.len());
        let mut counts = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = super::group_index(g, self.sums.len(), name)?;
            sums.push(self.sums[g].clone());
            valid.push(self.valid[g]);
            counts.push(self.counts[g]);
        }
        Ok(vec![
            R::Sum::build(sums, valid, sum_type)?,
            Arc::new(Int64Array::from(counts)),
        ])
    }

    /// Sets the listed groups from `[sum, count]` columns.
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let [sum_column, count_column] = state else {
            return Err(AggError::Input(format!(
                "{name}: expected state columns [sum, count], got {}",
                state.len()
            )));
        };
        let sums_in_column = R::Sum::prepare(sum_column)?;
        let sums_in = R::Sum::bind(&sums_in_column, name)?;
        let counts_in = count_array(count_column, name)?;
        for (i, &g) in groups.iter().enumerate() {
            let g = super::group_index(g, self.sums.len(), name)?;
            if sum_column.is_valid(i) {
                R::Sum::store(&mut self.sums[g], R::Sum::get(&sums_in, i));
                self.valid[g] = true;
            } else {
                self.sums[g] = R::zero();
                self.valid[g] = false;
            }
            self.counts[g] = if counts_in.is_valid(i) {
                counts_in.value(i)
            } else {
                0
            };
        }
        Ok(())
    }

    /// Sets `changed[i]` where two result columns differ.
    pub fn mark_changed(
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
        name: &str,
    ) -> Result<()> {
        super::mark_changed_with::<R::Out>(before, after, changed, name, R::same)
    }
}

fn count_array<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a Int64Array> {
    column.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
        AggError::Input(format!(
            "{name}: expected an Int64 count column, got {}",
            column.data_type()
        ))
    })
}
