//! One BIGINT counter per group: COUNT(*) counts selected rows, COUNT(x)
//! counts selected non-NULL values (the caller folds validity into
//! [`Rows`]). Counters wrap as Java longs do.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array};

use super::rows::Rows;
use super::GroupIds;
use crate::error::{AggError, Result};

/// Columnar counters.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    values: Vec<i64>,
}

impl Counts {
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
        8
    }

    /// Grows to `n` groups, new ones at zero.
    pub fn resize(&mut self, n: usize) {
        self.values.resize(n, 0);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        self.values.clear();
    }

    /// The fused loop's view of the state: `[counts]`.
    #[cfg(feature = "jit")]
    pub fn jit_state(&mut self) -> crate::jit::StatePtrs {
        crate::jit::StatePtrs {
            columns: vec![self.values.as_mut_ptr().cast()],
            groups: self.values.len(),
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.values.capacity() * 8
    }

    /// [`Counts::update`] of one selected row as the fused loop's IR over
    /// state `[count]` (COUNT(*) when `arg` is `None`, else COUNT over a
    /// column of that carrier, whose NULLs the loop leaves unselected); a
    /// retraction counts -1 ([`Counts::update_signed`]).
    #[cfg(feature = "jit")]
    pub fn lowering(arg: Option<crate::jit::Type>) -> crate::jit::Lowering {
        use crate::jit::{count_step, FunctionBuilder, StateRow, Value};
        fn fold(b: &mut FunctionBuilder<'_>, state: &mut StateRow, _: Option<Value>) {
            count_step(b, state, 0, 1);
        }
        fn retract(b: &mut FunctionBuilder<'_>, state: &mut StateRow, _: Option<Value>) {
            count_step(b, state, 0, -1);
        }
        crate::jit::Lowering {
            arg,
            state: vec![crate::jit::COUNT],
            fold,
            retract: Some(retract),
        }
    }

    /// Counts the selected rows.
    #[inline(always)]
    pub fn update(&mut self, rows: &Rows, groups: &GroupIds<'_>) {
        let group_ids = groups.ids();
        let values = &mut self.values[..];
        if group_ids.len() != rows.len() || groups.num_groups() != values.len() {
            // Not reachable from the generated code; kept checked.
            let group_ids = &group_ids[..rows.len()];
            rows.for_each(|i| {
                let slot = &mut values[group_ids[i] as usize];
                *slot = slot.wrapping_add(1);
            });
            return;
        }
        // Unselected rows add 0, so the loop has no branch on the mask.
        // SAFETY: `for_each_bit` yields only `i < rows.len()` (`Rows::new`
        // checks its mask is `len` bits) and `rows.len() == group_ids.len()`
        // (checked above), so `i` indexes `group_ids`. The id read there is
        // below `groups.num_groups()`, as `check_groups`, the only
        // constructor of `GroupIds`, checked every id, and `num_groups ==
        // values.len()` (checked above), so it indexes `values`.
        rows.for_each_bit(|i, bit| unsafe {
            let slot = values.get_unchecked_mut(*group_ids.get_unchecked(i) as usize);
            *slot = slot.wrapping_add(i64::from(bit));
        });
    }

    /// Counts the selected rows in order, each -U/-D row (by `kinds`)
    /// counting -1, as Flink's COUNT retracts.
    // Kept out of line: inlined next to `update`, its loop raised the
    // register pressure of the insert-only loop (a reload per row).
    #[inline(never)]
    pub fn update_signed(&mut self, rows: &Rows, groups: &GroupIds<'_>, kinds: &[i8]) {
        let group_ids = groups.ids();
        let n = rows.len();
        let values = &mut self.values[..];
        if group_ids.len() != n || groups.num_groups() != values.len() || kinds.len() < n {
            // Not reachable from the generated code; kept checked.
            rows.for_each(|i| {
                let slot = &mut values[group_ids[i] as usize];
                *slot = slot.wrapping_add(signed_one(kinds[i]));
            });
            return;
        }
        // SAFETY: the walk yields only `i < n` (`Rows::new` checks its mask is
        // `n` bits), `n == group_ids.len()` and `n <= kinds.len()` (checked
        // above); the id read is below `groups.num_groups()` (`check_groups`,
        // the only constructor of `GroupIds`), which equals `values.len()`.
        rows.for_each(|i| unsafe {
            let slot = values.get_unchecked_mut(*group_ids.get_unchecked(i) as usize);
            *slot = slot.wrapping_add(signed_one(*kinds.get_unchecked(i)));
        });
    }

    /// Resets the listed groups to zero (a group whose record count
    /// reached zero starts over).
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            if let Some(slot) = self.values.get_mut(g as usize) {
                *slot = 0;
            }
        }
    }

    /// Counts like [`Counts::update`] (signed by `kinds` when given),
    /// returning each row's count after it.
    pub fn update_traced(
        &mut self,
        rows: &Rows,
        group_ids: &[u32],
        kinds: Option<&[i8]>,
        changed: &mut [bool],
    ) -> Result<ArrayRef> {
        if changed.len() < rows.len() {
            return Err(AggError::Input(format!(
                "changed flags hold {} rows, batch has {}",
                changed.len(),
                rows.len()
            )));
        }
        let mut out = Vec::with_capacity(rows.len());
        for (i, &g) in group_ids[..rows.len()].iter().enumerate() {
            let slot = &mut self.values[g as usize];
            if rows.selected(i) {
                *slot = slot.wrapping_add(kinds.map_or(1, |k| signed_one(k[i])));
                changed[i] = true;
            }
            out.push(*slot);
        }
        Ok(Arc::new(Int64Array::from(out)))
    }

    /// Adds a BIGINT partial column; NULL partials add nothing.
    pub fn merge(&mut self, partial: &ArrayRef, group_ids: &[u32], name: &str) -> Result<()> {
        let column = int64(partial, name)?;
        let values = column.values();
        for (i, &g) in group_ids.iter().enumerate() {
            if column.is_valid(i) {
                let slot = &mut self.values[g as usize];
                *slot = slot.wrapping_add(values[i]);
            }
        }
        Ok(())
    }

    /// The counts of the listed groups.
    pub fn evaluate(&self, groups: &[u32], name: &str) -> Result<ArrayRef> {
        let out = groups
            .iter()
            .map(|&g| {
                self.values
                    .get(g as usize)
                    .copied()
                    .ok_or_else(|| AggError::Input(format!("{name}: group id {g} out of range")))
            })
            .collect::<Result<Vec<i64>>>()?;
        Ok(Arc::new(Int64Array::from(out)))
    }

    /// Sets the listed groups' counts (NULL restores zero).
    pub fn restore(&mut self, column: &ArrayRef, groups: &[u32], name: &str) -> Result<()> {
        let column = int64(column, name)?;
        for (i, &g) in groups.iter().enumerate() {
            let slot = self
                .values
                .get_mut(g as usize)
                .ok_or_else(|| AggError::Input(format!("{name}: group id {g} out of range")))?;
            *slot = if column.is_valid(i) {
                column.value(i)
            } else {
                0
            };
        }
        Ok(())
    }

    /// Sets `changed[i]` where two count columns differ.
    pub fn mark_changed(
        before: &ArrayRef,
        after: &ArrayRef,
        changed: &mut [bool],
        name: &str,
    ) -> Result<()> {
        super::mark_changed_with::<super::Prim<arrow_array::types::Int64Type>>(
            before,
            after,
            changed,
            name,
            |a, b| a == b,
        )
    }
}

/// +1 for an accumulating row kind, -1 for a retracting one.
#[inline(always)]
fn signed_one(kind: i8) -> i64 {
    if super::is_retract(kind) {
        -1
    } else {
        1
    }
}

fn int64<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a Int64Array> {
    column.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
        AggError::Input(format!(
            "{name}: expected an Int64 count column, got {}",
            column.data_type()
        ))
    })
}
