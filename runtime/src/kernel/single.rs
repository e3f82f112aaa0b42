//! SINGLE_VALUE, as Flink's declarative SingleValueAggFunction keeps it:
//! per group the value and a count of the rows folded (NULL counts as a
//! value). A second value fails the job with Flink's message.
//!
//! Flink's rules: accumulate sets the value when the count is 0 or less
//! and fails when it is above 0; retract sets the value to NULL when the
//! count is 0 or 1 and fails otherwise; both then move the count by one.
//!
//! A row that fails leaves its group as it was and marks it failed; a
//! failed group ignores its later rows, other groups go on. The operator
//! asks for the first failed row of a traced update
//! ([`SingleValues::refused_row`], immediate mode) or the first failed
//! group in its flush order ([`SingleValues::failed_position`], mini-batch),
//! emits what Flink emitted before that point, and fails.

use std::fmt;
use std::marker::PhantomData;

use hashbrown::HashSet;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array};
use arrow_schema::DataType;

use super::bind::Binding;
use super::rows::Rows;
use super::GroupIds;
use crate::error::{AggError, Result};

/// Flink's error when a group gets a second value.
pub const SINGLE_VALUE_ERROR: &str = "SingleValueAggFunction received more than one element.";

/// The per-specialization rule of a single-value state, written out by
/// the emitter.
pub trait SingleRule: 'static {
    /// Binding of the argument, result and state value.
    type Val: Binding;
    /// Result equality used to suppress unchanged results.
    fn same(a: <Self::Val as Binding>::Ref<'_>, b: <Self::Val as Binding>::Ref<'_>) -> bool;
}

type Owned<R> = <<R as SingleRule>::Val as Binding>::Owned;

/// Columnar single-value state.
pub struct SingleValues<R: SingleRule> {
    values: Vec<Owned<R>>,
    valid: Vec<bool>,
    counts: Vec<i32>,
    /// Groups a row failed (few in a job: the operator fails at the first;
    /// a set, so a run that keeps folding stays O(1) per row).
    failed: HashSet<u32>,
    /// The first row the latest update refused.
    refused: Option<usize>,
    _rule: PhantomData<R>,
}

impl<R: SingleRule> fmt::Debug for SingleValues<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SingleValues")
            .field("groups", &self.values.len())
            .field("failed", &self.failed)
            .finish()
    }
}

impl<R: SingleRule> Default for SingleValues<R> {
    fn default() -> Self {
        SingleValues {
            values: Vec::new(),
            valid: Vec::new(),
            counts: Vec::new(),
            failed: HashSet::new(),
            refused: None,
            _rule: PhantomData,
        }
    }
}

/// What folding one row does to a group.
enum Step {
    /// Set the count, and the value to the row's (`take`) or NULL.
    Set { take: bool, count: i32 },
    /// Flink throws here.
    Fail,
}

impl<R: SingleRule> SingleValues<R> {
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
        std::mem::size_of::<Owned<R>>() + 1 + 4
    }

    /// Grows (or shrinks) to `n` groups; new groups are fresh.
    pub fn resize(&mut self, n: usize) {
        self.values.resize(n, Owned::<R>::default());
        self.valid.resize(n, false);
        self.counts.resize(n, 0);
        self.failed.retain(|&g| (g as usize) < n);
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        *self = SingleValues::default();
    }

    /// Resets the listed groups (a failed one is no longer failed).
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            let gi = g as usize;
            if gi < self.values.len() {
                self.values[gi] = Owned::<R>::default();
                self.valid[gi] = false;
                self.counts[gi] = 0;
            }
        }
        if !self.failed.is_empty() {
            for g in groups {
                self.failed.remove(g);
            }
        }
    }

    /// Bytes held, heap included.
    pub fn memory_bytes(&self) -> usize {
        let heap: usize = self.values.iter().map(R::Val::heap_bytes).sum();
        self.values.capacity() * std::mem::size_of::<Owned<R>>()
            + self.valid.capacity()
            + self.counts.capacity() * 4
            + heap
    }

    /// The first row the latest `update`/`update_traced` refused.
    pub fn refused_row(&self) -> Option<usize> {
        self.refused
    }

    /// The position in `groups` of the first failed group.
    pub fn failed_position(&self, groups: &[u32]) -> Option<usize> {
        if self.failed.is_empty() {
            return None;
        }
        groups.iter().position(|g| self.failed.contains(g))
    }

    fn accumulate(count: i32) -> Step {
        if count > 0 {
            Step::Fail
        } else {
            Step::Set {
                take: true,
                count: count.wrapping_add(1),
            }
        }
    }

    fn retract(count: i32) -> Step {
        if count == 0 || count == 1 {
            Step::Set {
                take: false,
                count: count.wrapping_sub(1),
            }
        } else {
            Step::Fail
        }
    }

    /// Folds one row's value (`None` for NULL) into group `g`; returns
    /// false when the row fails.
    fn fold(
        &mut self,
        g: usize,
        value: Option<<R::Val as Binding>::Ref<'_>>,
        retract: bool,
    ) -> bool {
        if !self.failed.is_empty() && self.failed.contains(&(g as u32)) {
            return true;
        }
        let step = if retract {
            Self::retract(self.counts[g])
        } else {
            Self::accumulate(self.counts[g])
        };
        match step {
            Step::Fail => {
                self.failed.insert(g as u32);
                false
            }
            Step::Set { take, count } => {
                self.counts[g] = count;
                match (take, value) {
                    (true, Some(v)) => {
                        R::Val::store(&mut self.values[g], v);
                        self.valid[g] = true;
                    }
                    _ => self.valid[g] = false,
                }
                true
            }
        }
    }

    fn fold_row(
        &mut self,
        column: &<R::Val as Binding>::Reader<'_>,
        nulls: Option<&arrow_buffer::NullBuffer>,
        i: usize,
        g: usize,
        kinds: Option<&[i8]>,
    ) {
        let value = nulls
            .is_none_or(|n| n.is_valid(i))
            .then(|| R::Val::get(column, i));
        let retract = kinds.is_some_and(|k| super::is_retract(k[i]));
        if !self.fold(g, value, retract) && self.refused.is_none() {
            self.refused = Some(i);
        }
    }

    /// Folds the selected rows (FILTER true; NULL values count) in order;
    /// rows `kinds` marks -U/-D retract.
    pub fn update(
        &mut self,
        column: <R::Val as Binding>::Reader<'_>,
        nulls: Option<&arrow_buffer::NullBuffer>,
        rows: &Rows,
        groups: &GroupIds<'_>,
        kinds: Option<&[i8]>,
    ) {
        self.refused = None;
        let ids = groups.ids();
        rows.for_each(|i| self.fold_row(&column, nulls, i, ids[i] as usize, kinds));
    }

    /// Folds like [`SingleValues::update`] and returns each row's result
    /// right after it, setting `changed` where it differs from before.
    #[allow(clippy::too_many_arguments)]
    pub fn update_traced(
        &mut self,
        column: <R::Val as Binding>::Reader<'_>,
        nulls: Option<&arrow_buffer::NullBuffer>,
        rows: &Rows,
        groups: &GroupIds<'_>,
        kinds: Option<&[i8]>,
        changed: &mut [bool],
        result_type: &DataType,
        name: &str,
    ) -> Result<ArrayRef> {
        self.refused = None;
        super::trace_rows::<R::Val>(
            rows,
            groups.ids(),
            changed,
            name,
            result_type,
            R::same,
            |i, g, selected| {
                let before = self.result(g);
                if selected {
                    self.fold_row(&column, nulls, i, g, kinds);
                }
                (before, self.result(g))
            },
        )
    }

    fn result(&self, g: usize) -> Option<Owned<R>> {
        self.valid[g].then(|| self.values[g].clone())
    }

    /// Merges partial columns `(value, count)` in row order (Flink's merge
    /// expressions); a sum of counts above 1 fails the group.
    pub fn merge(
        &mut self,
        partials: &[ArrayRef],
        groups: &GroupIds<'_>,
        name: &str,
    ) -> Result<()> {
        let (values, counts) = Self::partial_columns(partials, name)?;
        let reader_column = R::Val::prepare(values)?;
        let reader = R::Val::bind(&reader_column, name)?;
        for (j, &g) in groups.ids().iter().enumerate() {
            let g = g as usize;
            if self.failed.contains(&(g as u32)) {
                continue;
            }
            let mine = self.counts[g];
            let theirs = counts.value(j);
            let sum = mine.wrapping_add(theirs);
            let take = if sum > 1 {
                self.failed.insert(g as u32);
                continue;
            } else if sum == 0 {
                mine == 0 || theirs > 0
            } else {
                true
            };
            self.counts[g] = sum;
            if take && values.is_valid(j) {
                R::Val::store(&mut self.values[g], R::Val::get(&reader, j));
                self.valid[g] = true;
            } else {
                self.valid[g] = false;
            }
        }
        Ok(())
    }

    fn partial_columns<'a>(
        partials: &'a [ArrayRef],
        name: &str,
    ) -> Result<(&'a ArrayRef, &'a Int32Array)> {
        match partials {
            [values, counts] => {
                let counts = counts
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .ok_or_else(|| AggError::Input(format!("{name}: the count is not Int32")))?;
                if counts.null_count() > 0 {
                    return Err(AggError::Input(format!("{name}: NULL counts")));
                }
                Ok((values, counts))
            }
            _ => Err(AggError::Input(format!(
                "{name}: expected the partial columns (value, count), got {}",
                partials.len()
            ))),
        }
    }

    /// The results of the listed groups.
    pub fn evaluate(&self, groups: &[u32], result_type: &DataType, name: &str) -> Result<ArrayRef> {
        let mut out = Vec::with_capacity(groups.len());
        let mut valid = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = super::group_index(g, self.values.len(), name)?;
            valid.push(self.valid[g]);
            // A NULL slot writes the default, whatever value it held before.
            out.push(self.result(g).unwrap_or_default());
        }
        R::Val::build(out, valid, result_type)
    }

    /// The partial (and snapshot) columns `(value, count)` of the listed
    /// groups.
    pub fn partials(
        &self,
        groups: &[u32],
        value_type: &DataType,
        name: &str,
    ) -> Result<Vec<ArrayRef>> {
        let values = self.evaluate(groups, value_type, name)?;
        let counts: Int32Array = groups
            .iter()
            .map(|&g| Some(self.counts[g as usize]))
            .collect();
        Ok(vec![values, Arc::new(counts)])
    }

    /// Sets the listed groups from `(value, count)` columns (checked
    /// first); a restored group is not failed.
    pub fn restore(&mut self, state: &[ArrayRef], groups: &[u32], name: &str) -> Result<()> {
        let (values, counts) = Self::partial_columns(state, name)?;
        let reader_column = R::Val::prepare(values)?;
        let reader = R::Val::bind(&reader_column, name)?;
        for &g in groups {
            super::group_index(g, self.values.len(), name)?;
        }
        self.clear(groups);
        for (j, &g) in groups.iter().enumerate() {
            let g = g as usize;
            self.counts[g] = counts.value(j);
            if values.is_valid(j) {
                R::Val::store(&mut self.values[g], R::Val::get(&reader, j));
                self.valid[g] = true;
            }
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
        super::mark_changed_with::<R::Val>(before, after, changed, name, R::same)
    }
}
