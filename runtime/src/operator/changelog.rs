//! The changelog every operator path emits: Flink's -D/+I/-U/+U rules in
//! one loop ([`emit`]), over the changes a path computed (per row in
//! immediate mode, per bundle group at a flush). The rows are gathered at
//! the end with `take` and `interleave`, never row by row through scalars.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int8Array, RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;
use arrow_select::interleave::interleave;
use arrow_select::take::take;

use crate::accumulator::GroupAccumulator;
use crate::error::Result;
use crate::plan::AggPlan;
use crate::types::RowKind;

/// Source of result values taken before an update.
pub(crate) const BEFORE: usize = 0;
/// Source of result values taken after an update.
pub(crate) const AFTER: usize = 1;

/// The plan's settings that decide which changes are emitted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// Emit -U before each +U (the plan's `generate_update_before`).
    pub update_before: bool,
    /// Emit -U/+U even when no result changed: with a state TTL Flink does,
    /// so downstream state is not evicted early.
    pub emit_unchanged: bool,
}

impl Rules {
    /// The rules of a plan.
    pub(crate) fn of(plan: &AggPlan) -> Self {
        Rules {
            update_before: plan.generate_update_before,
            emit_unchanged: plan.state_ttl_ms > 0,
        }
    }
}

/// What one row (immediate mode) or bundle group (flush) did to its
/// group's result.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Change {
    /// Output row: the index of its key row, and of its new result in the
    /// AFTER source.
    pub row: u32,
    /// The previous result as (source, index); `None` when the group had
    /// no state before.
    pub prev: Option<(usize, usize)>,
    /// The record count reached zero (the group's state is cleared).
    pub emptied: bool,
    /// Some call's result differs from the previous one.
    pub changed: bool,
}

/// Builds the changelog of `changes`, in order: an emptied group emits -D
/// of its previous result (nothing if it had none), a group without
/// previous state +I, any other -U (under `update_before`) and +U when its
/// result changed or `emit_unchanged`. Keys come from `keys` rows, each
/// call's values from its `[before, after]` columns.
pub(crate) fn emit(
    rules: Rules,
    changes: impl IntoIterator<Item = Change>,
    schema: &SchemaRef,
    keys: &[ArrayRef],
    values: &[[ArrayRef; 2]],
) -> Result<RecordBatch> {
    let mut log = Changelog::default();
    for Change {
        row,
        prev,
        emptied,
        changed,
    } in changes
    {
        match prev {
            Some((src, idx)) if emptied => log.push(RowKind::Delete, row, src, idx),
            None if emptied => {}
            None => log.push(RowKind::Insert, row, AFTER, row as usize),
            Some((src, idx)) => {
                if changed || rules.emit_unchanged {
                    if rules.update_before {
                        log.push(RowKind::UpdateBefore, row, src, idx);
                    }
                    log.push(RowKind::UpdateAfter, row, AFTER, row as usize);
                }
            }
        }
    }
    log.finish(schema, keys, values)
}

/// Each call's `[before, after]` value sources; an empty `before` (no
/// group had state) becomes an empty slice of `after`'s type.
pub(crate) fn before_after(before: Vec<ArrayRef>, after: Vec<ArrayRef>) -> Vec<[ArrayRef; 2]> {
    before
        .into_iter()
        .zip(after)
        .map(|(b, a)| {
            let b = if b.is_empty() { a.slice(0, 0) } else { b };
            [b, a]
        })
        .collect()
}

/// Each call's `[before, after]` value sources, as given.
pub(crate) fn pairs(before: Vec<ArrayRef>, after: Vec<ArrayRef>) -> Vec<[ArrayRef; 2]> {
    before.into_iter().zip(after).map(|(b, a)| [b, a]).collect()
}

/// Flags, per compared pair, whether any of `accs`' results changed:
/// `before[c][prev_idx[i]]` against `after[c][new_pos[i]]`, under Flink's
/// equaliser.
pub(crate) fn changed(
    accs: &[Box<dyn GroupAccumulator>],
    before: &[ArrayRef],
    prev_idx: &[u32],
    after: &[ArrayRef],
    new_pos: &[u32],
) -> Result<Vec<bool>> {
    let mut changed = vec![false; prev_idx.len()];
    if prev_idx.is_empty() {
        return Ok(changed);
    }
    let prev_idx = UInt32Array::from(prev_idx.to_vec());
    let new_pos = UInt32Array::from(new_pos.to_vec());
    for (c, acc) in accs.iter().enumerate() {
        let b = take(before[c].as_ref(), &prev_idx, None)?;
        let a = take(after[c].as_ref(), &new_pos, None)?;
        acc.mark_changed(&b, &a, &mut changed)?;
    }
    Ok(changed)
}

/// The rows of one output batch, as indexes into column sources.
#[derive(Debug, Default)]
struct Changelog {
    kinds: Vec<i8>,
    key_rows: Vec<u32>,
    values: Vec<(usize, usize)>,
}

impl Changelog {
    fn push(&mut self, kind: RowKind, key_row: u32, source: usize, index: usize) {
        self.kinds.push(kind as i8);
        self.key_rows.push(key_row);
        self.values.push((source, index));
    }

    /// Builds the batch: keys from `key_source` rows, each call's values
    /// from its `[before, after]` columns.
    fn finish(
        self,
        schema: &SchemaRef,
        key_source: &[ArrayRef],
        values: &[[ArrayRef; 2]],
    ) -> Result<RecordBatch> {
        let mut columns = Vec::with_capacity(schema.fields().len());
        let rows = UInt32Array::from(self.key_rows);
        for key in key_source {
            columns.push(take(key.as_ref(), &rows, None)?);
        }
        for [before, after] in values {
            columns.push(interleave(
                &[before.as_ref(), after.as_ref()],
                &self.values,
            )?);
        }
        columns.push(Arc::new(Int8Array::from(self.kinds)) as ArrayRef);
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}
