//! Generic, monomorphizable state kernels that the templates' accumulators
//! drive.
//!
//! The kernels know nothing about specs: a state template
//! (`crate::templates`) picks a [`Binding`] per column (how values are read
//! from and written to Arrow) and implements a small rule trait with the
//! per-type fold (`SlotRule` for running extremes and sums, `AvgRule` for AVG
//! and SUM over retractions, `MultisetRule` for MIN/MAX over retractions;
//! LISTAGG's [`Concat`] and [`StringLists`] need no rule);
//! the loops here apply it. State is columnar: vectors indexed by `u32` group id.

pub mod arrival;
pub mod avg;
pub mod bind;
pub mod candidates;
pub mod concat;
pub mod count;
pub mod counted_partial;
pub mod decimal;
mod list_bytes;
pub mod multiset;
pub mod rows;
pub mod single;
pub mod slots;
pub mod string_list;
mod string_list_partial;
pub mod timestamp;

pub use arrival::{ArrivalLists, ArrivalRule};
pub use avg::{AvgRule, AvgState};
pub use bind::{Binding, Bool, Dec128, Dec64, Prim, Ts, Utf8};
pub use concat::{Concat, Separators};
pub use count::Counts;
pub use list_bytes::{list_type, ListBytes};
pub use multiset::{CountedExtremes, MultisetRule};
pub use rows::Rows;
pub use single::{SingleRule, SingleValues};
pub use slots::{SlotRule, Slots};
pub use string_list::StringLists;
pub use timestamp::{timestamp_struct_type, Timestamp};

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::accumulator::BatchUpdate;
use crate::error::{AggError, Result};
use crate::types::RowKind;

/// Fails when an insert-only accumulator is handed -U or -D rows (or an
/// unknown row-kind code): it cannot retract.
pub fn check_insert_only(batch: &BatchUpdate<'_>, name: &str) -> Result<()> {
    let Some(kinds) = batch.row_kinds else {
        return Ok(());
    };
    if kinds.len() != batch.len() {
        return Err(AggError::Input(format!(
            "{name}: row-kind column has {} rows, batch has {}",
            kinds.len(),
            batch.len()
        )));
    }
    // Fast check first: +I (0) and +U (2) are the only codes accepted.
    if kinds.iter().all(|&k| k & !2 == 0) {
        return Ok(());
    }
    let (row, &code) = kinds
        .iter()
        .enumerate()
        .find(|(_, &k)| k & !2 != 0)
        .unwrap_or((0, &0));
    let kind = RowKind::from_i8(code)
        .map(|k| k.short_string().to_string())
        .unwrap_or_else(|| format!("unknown row kind {code}"));
    Err(AggError::Input(format!(
        "{name} accepts insert-only input but row {row} is {kind}; \
         a retracting specialization is needed"
    )))
}

/// Whether a Flink row-kind code retracts (-U 1, -D 3).
#[inline(always)]
pub fn is_retract(kind: i8) -> bool {
    kind & 1 == 1
}

/// The row kinds of a batch for a retracting accumulator: `Some` only when
/// at least one row retracts (so insert-only batches keep the fast paths).
/// Fails on a row-kind column of the wrong length or an unknown code.
pub fn retract_kinds<'a>(batch: &BatchUpdate<'a>, name: &str) -> Result<Option<&'a [i8]>> {
    let Some(kinds) = batch.row_kinds else {
        return Ok(None);
    };
    if kinds.len() != batch.len() {
        return Err(AggError::Input(format!(
            "{name}: row-kind column has {} rows, batch has {}",
            kinds.len(),
            batch.len()
        )));
    }
    // One pass with no early exit, which vectorizes: every kind is a code
    // 0..=3 exactly when their OR as bytes is (a code above 3, or a
    // negative one, sets a higher bit), and -U (1) and -D (3) are the odd
    // codes, so some row retracts exactly when the OR's low bit is set.
    let all_bits = kinds.iter().fold(0u8, |bits, &k| bits | k as u8);
    if all_bits > 3 {
        let bad = kinds.iter().find(|&&k| !(0..=3).contains(&k));
        return Err(AggError::Input(format!(
            "{name}: unknown row kind {}",
            bad.copied().unwrap_or_default()
        )));
    }
    Ok(is_retract(all_bits as i8).then_some(kinds))
}

/// Sets `changed[i]` where `before[i]` and `after[i]`, two result columns
/// read with binding `B`, differ under `same` (NULL equals NULL); never
/// clears a flag.
pub fn mark_changed_with<B: Binding>(
    before: &ArrayRef,
    after: &ArrayRef,
    changed: &mut [bool],
    name: &str,
    same: impl Fn(B::Ref<'_>, B::Ref<'_>) -> bool,
) -> Result<()> {
    if before.len() != after.len() || changed.len() < before.len() {
        return Err(AggError::Input(format!(
            "{name}: mark_changed got {} and {} rows for {} flags",
            before.len(),
            after.len(),
            changed.len()
        )));
    }
    let a_column = B::prepare(before)?;
    let a = B::bind(&a_column, name)?;
    let b_column = B::prepare(after)?;
    let b = B::bind(&b_column, name)?;
    for (i, flag) in changed.iter_mut().enumerate().take(before.len()) {
        let differs = match (before.is_valid(i), after.is_valid(i)) {
            (true, true) => !same(B::get(&a, i), B::get(&b, i)),
            (false, false) => false,
            _ => true,
        };
        *flag |= differs;
    }
    Ok(())
}

/// A traced fold (immediate emission): `step(i, g, selected)` reads group
/// `g`'s result, folds row `i` if it is selected, and reads the result
/// again. Returns the result after each row as a column of binding `B` and
/// sets `changed[i]` where the row changed it under `same` (NULL equals
/// NULL); never clears a flag.
#[allow(clippy::type_complexity)]
pub(crate) fn trace_rows<B: Binding>(
    rows: &Rows,
    group_ids: &[u32],
    changed: &mut [bool],
    name: &str,
    result_type: &DataType,
    same: impl Fn(B::Ref<'_>, B::Ref<'_>) -> bool,
    mut step: impl FnMut(usize, usize, bool) -> (Option<B::Owned>, Option<B::Owned>),
) -> Result<ArrayRef> {
    if changed.len() < rows.len() || group_ids.len() < rows.len() {
        return Err(AggError::Input(format!(
            "{name}: changed flags hold {} rows, group ids {}, batch has {}",
            changed.len(),
            group_ids.len(),
            rows.len()
        )));
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut out_valid = Vec::with_capacity(rows.len());
    for (i, &g) in group_ids[..rows.len()].iter().enumerate() {
        let (before, after) = step(i, g as usize, rows.selected(i));
        let unchanged = match (&before, &after) {
            (Some(a), Some(b)) => same(B::view(a), B::view(b)),
            (None, None) => true,
            _ => false,
        };
        changed[i] |= !unchanged;
        out_valid.push(after.is_some());
        out.push(after.unwrap_or_default());
    }
    B::build(out, out_valid, result_type)
}

/// Group ids checked against a number of groups: every id is below
/// [`GroupIds::num_groups`]. Only [`check_groups`] builds one, so the update
/// kernels may index state without bounds checks once they have seen that
/// their state holds exactly `num_groups` groups.
#[derive(Debug, Clone, Copy)]
pub struct GroupIds<'a> {
    ids: &'a [u32],
    num_groups: usize,
}

impl<'a> GroupIds<'a> {
    /// The ids, one per row.
    #[inline(always)]
    pub fn ids(&self) -> &'a [u32] {
        self.ids
    }

    /// The bound every id is below.
    #[inline(always)]
    pub fn num_groups(&self) -> usize {
        self.num_groups
    }
}

/// Checks one group id against the number of groups held (the checked
/// paths: merge, restore, evaluate).
pub(crate) fn group_index(g: u32, len: usize, name: &str) -> Result<usize> {
    let g = g as usize;
    if g < len {
        Ok(g)
    } else {
        Err(AggError::Input(format!(
            "{name}: group id {g} out of range, state holds {len} groups"
        )))
    }
}

/// Checks the group ids of a batch against the number of groups held (one
/// vectorizable pass) and returns them as proven in range.
pub fn check_groups<'a>(
    group_ids: &'a [u32],
    num_groups: usize,
    name: &str,
) -> Result<GroupIds<'a>> {
    let max = group_ids.iter().copied().fold(0u32, u32::max);
    if !group_ids.is_empty() && max as usize >= num_groups {
        return Err(AggError::Input(format!(
            "{name}: group id {max} out of range, state holds {num_groups} groups (call resize first)"
        )));
    }
    Ok(GroupIds {
        ids: group_ids,
        num_groups,
    })
}

/// The `index`-th argument column of a batch, checked against the Arrow type
/// the plan promised and the batch length.
pub fn argument<'a>(
    batch: &BatchUpdate<'a>,
    index: usize,
    expected: &DataType,
    name: &str,
) -> Result<&'a ArrayRef> {
    let column = batch.args.get(index).ok_or_else(|| {
        AggError::Input(format!(
            "{name}: expected argument column {index}, batch has {}",
            batch.args.len()
        ))
    })?;
    check_column(column, expected, batch.len(), name)?;
    Ok(column)
}

/// Checks one column's type and length.
pub fn check_column(column: &ArrayRef, expected: &DataType, len: usize, name: &str) -> Result<()> {
    // equals_datatype: a list's item field may be named as the writer
    // names it (Java's Arrow writes `$data$`).
    if !column.data_type().equals_datatype(expected) {
        return Err(AggError::Input(format!(
            "{name}: expected a column of type {expected}, got {}",
            column.data_type()
        )));
    }
    if column.len() != len {
        return Err(AggError::Input(format!(
            "{name}: column has {} rows, expected {len}",
            column.len()
        )));
    }
    Ok(())
}

/// Checks a set of partial or state columns against the expected layout.
pub fn check_columns<'a>(
    columns: &'a [ArrayRef],
    expected: &[DataType],
    len: usize,
    name: &str,
) -> Result<&'a [ArrayRef]> {
    if columns.len() != expected.len() {
        return Err(AggError::Input(format!(
            "{name}: expected {} partial/state columns, got {}",
            expected.len(),
            columns.len()
        )));
    }
    for (column, ty) in columns.iter().zip(expected) {
        check_column(column, ty, len, name)?;
    }
    Ok(columns)
}

/// Fails unless `arg` is present, for functions with one argument.
pub fn require_arg<'a>(
    arg: Option<&'a crate::types::SqlType>,
    name: &str,
) -> Result<&'a crate::types::SqlType> {
    arg.ok_or_else(|| AggError::Plan(format!("{name} needs an argument type")))
}

/// The scale of a DECIMAL argument (0 for other types).
pub fn arg_scale(arg: &crate::types::SqlType) -> i8 {
    arg.scale().unwrap_or(0)
}

/// `DECIMAL(38, s)` with `s = max(at_least, scale)`.
pub fn decimal38(scale: i8, at_least: i8) -> DataType {
    DataType::Decimal128(38, scale.max(at_least))
}

/// `Decimal128(p, s)` of a DECIMAL argument.
pub fn decimal_type(arg: &crate::types::SqlType) -> Result<DataType> {
    match (arg.precision(), arg.scale()) {
        (Some(precision), Some(scale)) => Ok(DataType::Decimal128(precision, scale)),
        _ => Err(AggError::Plan(format!(
            "expected a DECIMAL argument, got {arg}"
        ))),
    }
}

/// Fails unless the argument's SQL type maps to the type row a
/// specialization was generated for.
pub fn check_type_row(
    arg: &crate::types::SqlType,
    row: &str,
    found: Option<&str>,
    name: &str,
) -> Result<()> {
    if found == Some(row) {
        Ok(())
    } else {
        Err(AggError::Plan(format!(
            "{name} is specialized for type row {row}, but the argument is {arg}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retracting_rows(kinds: &[i8]) -> Result<Option<Vec<i8>>> {
        let ids = vec![0u32; kinds.len()];
        let batch = BatchUpdate {
            args: &[],
            group_ids: &ids,
            filter: None,
            row_kinds: Some(kinds),
            distinct: None,
        };
        retract_kinds(&batch, "MAX").map(|k| k.map(<[i8]>::to_vec))
    }

    #[test]
    fn kinds_are_checked_in_one_pass() {
        assert_eq!(retracting_rows(&[0, 2, 2, 0]).unwrap(), None);
        assert_eq!(retracting_rows(&[0, 2, 1]).unwrap(), Some(vec![0, 2, 1]));
        assert_eq!(retracting_rows(&[3]).unwrap(), Some(vec![3]));
        for (kinds, bad) in [
            (&[0, 4, 1][..], "4"),
            (&[2, -1][..], "-1"),
            (&[64][..], "64"),
        ] {
            let err = retracting_rows(kinds).unwrap_err().to_string();
            assert!(
                err.contains(&format!("MAX: unknown row kind {bad}")),
                "{err}"
            );
        }
    }
}
