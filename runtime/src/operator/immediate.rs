//! Single phase, immediate mode: Flink's GroupAggFunction, one changelog
//! change per input row. Insert-only batches are folded in one traced
//! pass; batches with retractions are cut into pieces after each row that
//! empties a group, and a retraction for a group without state is dropped.

use std::collections::HashMap;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_select::concat::concat_batches;

use super::bundle::NONE;
use super::changelog::{self, before_after, Change, Rules, AFTER, BEFORE};
use super::input::Input;
use super::GroupAggOperator;
use crate::accumulator::BatchUpdate;
use crate::error::Result;
use crate::kernel::is_retract;

/// What one row does in immediate mode over retracting input.
#[derive(Debug, Clone, Copy, Default)]
struct RowFate {
    /// Applied (not a retraction for a group without state).
    accepted: bool,
    /// The group had no state before the row (+I unless it also empties).
    first: bool,
    /// The row brings the record count to zero (-D, state cleared).
    empties: bool,
}

impl GroupAggOperator {
    /// Single phase, immediate, over an insert-only batch.
    pub(super) fn process_immediate(&mut self, input: &Input<'_>) -> Result<RecordBatch> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        self.expire_batch_groups();
        let rows = input.num_rows;
        let n = self.table.len();
        let scratch_before = self.last_row.capacity();
        self.last_row.resize(n, NONE);
        let scratch_growth = (self.last_row.capacity() - scratch_before) * 4;
        // Per row: where its previous result comes from. The first row of a
        // group in this batch reads the pre-batch result (BEFORE source, by
        // position in `first_live`), or has none when the group had no
        // state; later rows read the traced result of the group's previous
        // row (AFTER source).
        let mut prev_src: Vec<Option<(usize, usize)>> = Vec::with_capacity(rows);
        let mut first_live: Vec<u32> = Vec::new();
        for (row, &g) in self.ids.iter().enumerate() {
            let gi = g as usize;
            let last = self.last_row[gi];
            if last == NONE {
                let had_state = gi < before && self.live[gi];
                if had_state {
                    prev_src.push(Some((BEFORE, first_live.len())));
                    first_live.push(g);
                } else {
                    prev_src.push(None);
                }
            } else {
                prev_src.push(Some((AFTER, last as usize)));
            }
            self.last_row[gi] = row as u32;
        }
        for &g in &self.ids {
            self.last_row[g as usize] = NONE;
        }
        let prev = match self.evaluate_all(&first_live) {
            Ok(prev) => prev,
            Err(e) => {
                self.undo_intern(before);
                return Err(e);
            }
        };
        let prev_bytes: usize = prev.iter().map(|a| a.get_array_memory_size()).sum();
        self.reserve_after_intern(
            before,
            table_bytes,
            0,
            (prev_bytes + scratch_growth, scratch_growth),
            input,
        )?;
        self.grow_groups();

        let mut changed = vec![false; rows];
        let ids = std::mem::take(&mut self.ids);
        let traced = self.traced_update(
            (&input.args, &input.filters),
            &ids,
            None,
            input.row_kinds,
            &mut changed,
        );
        self.ids = ids;
        let traced = traced?;
        for &g in &self.ids {
            self.live.set(g as usize);
        }
        let ids = std::mem::take(&mut self.ids);
        self.touch(&ids);
        self.ids = ids;
        self.budget.release(prev_bytes);

        // A refused row fails the query after the changes of the rows
        // before it.
        let refused = self.first_refused_row();
        self.failure = refused.map(|(_, message)| message);
        let emitted = refused.map_or(rows, |(row, _)| row);
        let changes =
            prev_src[..emitted]
                .iter()
                .zip(&changed)
                .enumerate()
                .map(|(row, (&prev, &changed))| Change {
                    row: row as u32,
                    prev,
                    emptied: false,
                    changed,
                });
        changelog::emit(
            Rules::of(&self.plan),
            changes,
            &self.schema,
            &input.keys,
            &before_after(prev, traced),
        )
    }

    /// Folds rows into every call: the output calls traced (each row's
    /// result after it, `changed` set as it changes), the inserted record
    /// counter plainly.
    fn traced_update(
        &mut self,
        (args, filters): (&[Vec<ArrayRef>], &[Option<BooleanArray>]),
        group_ids: &[u32],
        accepted: Option<&BooleanArray>,
        row_kinds: Option<&[i8]>,
        changed: &mut [bool],
    ) -> Result<Vec<ArrayRef>> {
        let mut traced = Vec::with_capacity(self.visible);
        let rows: Vec<Option<BooleanArray>> = filters
            .iter()
            .map(|filter| super::input::call_rows(filter.as_ref(), accepted))
            .collect();
        let updates: Vec<BatchUpdate<'_>> = args
            .iter()
            .zip(&rows)
            .map(|(args, rows)| BatchUpdate {
                args,
                group_ids,
                filter: rows.as_ref(),
                row_kinds,
                distinct: None,
            })
            .collect();
        let visible = self.visible;
        super::shared_views::fold_calls(
            &mut self.accs,
            &self.shared,
            &updates,
            |c, acc, update| {
                if c < visible {
                    traced.push(acc.update_traced(update, changed)?);
                } else {
                    acc.update(update)?;
                }
                Ok(())
            },
        )?;
        Ok(traced)
    }

    /// Single phase, immediate, over a batch with retractions: Flink's
    /// GroupAggFunction row by row. The batch is cut after each row that
    /// empties a group, so every piece is folded with the traced kernels
    /// and no group is cleared inside a piece.
    pub(super) fn process_immediate_retracting(
        &mut self,
        input: &Input<'_>,
        kinds: &[i8],
    ) -> Result<RecordBatch> {
        let table_bytes = self.table.memory_bytes();
        let before = self.intern(input)?;
        self.reserve_after_intern(before, table_bytes, 0, (0, 0), input)?;
        self.grow_groups();
        self.expire_batch_groups();
        let ids = std::mem::take(&mut self.ids);
        let result = self.fold_pieces(input, kinds, &ids);
        self.ids = ids;
        result
    }

    fn fold_pieces(&mut self, input: &Input<'_>, kinds: &[i8], ids: &[u32]) -> Result<RecordBatch> {
        let fates = self.row_fates(kinds, ids)?;
        let mut outputs = Vec::new();
        let mut start = 0;
        while start < ids.len() {
            let end = fates[start..]
                .iter()
                .position(|f| f.empties)
                .map_or(ids.len(), |p| start + p + 1);
            outputs.push(self.fold_piece(input, kinds, ids, &fates, start, end)?);
            if self.failure.is_some() {
                break;
            }
            start = end;
        }
        Ok(concat_batches(&self.schema, &outputs)?)
    }

    /// Walks the rows with each group's state flag and record count.
    fn row_fates(&self, kinds: &[i8], ids: &[u32]) -> Result<Vec<RowFate>> {
        let mut seen: Vec<u32> = ids.to_vec();
        seen.sort_unstable();
        seen.dedup();
        let live: Vec<u32> = seen
            .iter()
            .copied()
            .filter(|&g| self.live[g as usize])
            .collect();
        let counts = self.record_counts(&live)?.unwrap_or_default();
        let mut walk: HashMap<u32, (bool, i64)> = live
            .iter()
            .zip(counts)
            .map(|(&g, c)| (g, (true, c)))
            .collect();
        let mut fates = Vec::with_capacity(ids.len());
        for (&g, &kind) in ids.iter().zip(kinds) {
            let (has_state, count) = walk.entry(g).or_insert((false, 0));
            let retract = is_retract(kind);
            let mut fate = RowFate::default();
            if !*has_state {
                if retract {
                    fates.push(fate);
                    continue;
                }
                *has_state = true;
                *count = 0;
                fate.first = true;
            }
            fate.accepted = true;
            *count = count.wrapping_add(if retract { -1 } else { 1 });
            if *count == 0 {
                fate.empties = true;
                *has_state = false;
            }
            fates.push(fate);
        }
        Ok(fates)
    }

    /// Folds rows `start..end` (no group empties before `end - 1`) and
    /// returns their changelog.
    fn fold_piece(
        &mut self,
        input: &Input<'_>,
        kinds: &[i8],
        ids: &[u32],
        fates: &[RowFate],
        start: usize,
        end: usize,
    ) -> Result<RecordBatch> {
        let len = end - start;
        let piece_ids = &ids[start..end];
        let piece_fates = &fates[start..end];
        // Where each accepted row's previous result comes from.
        let mut prev_src = vec![(BEFORE, 0usize); len];
        let mut first_live = Vec::new();
        let mut last: HashMap<u32, usize> = HashMap::new();
        for (j, (&g, fate)) in piece_ids.iter().zip(piece_fates).enumerate() {
            if !fate.accepted {
                continue;
            }
            match last.insert(g, j) {
                Some(prev) => prev_src[j] = (AFTER, prev),
                None if !fate.first => {
                    prev_src[j] = (BEFORE, first_live.len());
                    first_live.push(g);
                }
                None => {}
            }
        }
        let prev = self.evaluate_all(&first_live)?;
        let filter = piece_fates.iter().any(|f| !f.accepted).then(|| {
            BooleanArray::from(piece_fates.iter().map(|f| f.accepted).collect::<Vec<_>>())
        });
        let args: Vec<Vec<ArrayRef>> = input
            .args
            .iter()
            .map(|cols| cols.iter().map(|a| a.slice(start, len)).collect())
            .collect();
        let filters: Vec<Option<BooleanArray>> = input
            .filters
            .iter()
            .map(|f| f.as_ref().map(|f| f.slice(start, len)))
            .collect();
        let mut changed = vec![false; len];
        let traced = self.traced_update(
            (&args, &filters),
            piece_ids,
            filter.as_ref(),
            Some(&kinds[start..end]),
            &mut changed,
        )?;
        let mut emptied = Vec::new();
        for (&g, fate) in piece_ids.iter().zip(piece_fates) {
            if fate.accepted {
                self.live.set(g as usize);
                if fate.empties {
                    emptied.push(g);
                }
            }
        }
        let written: Vec<u32> = piece_ids
            .iter()
            .zip(piece_fates)
            .filter(|(_, f)| f.accepted)
            .map(|(&g, _)| g)
            .collect();
        self.touch(&written);
        self.clear_groups(&emptied);
        let keys: Vec<ArrayRef> = input.keys.iter().map(|k| k.slice(start, len)).collect();
        // A refused row fails the query after the changes of the rows
        // before it.
        let refused = self.first_refused_row();
        self.failure = refused.map(|(_, message)| message);
        let emitted = refused.map_or(len, |(row, _)| row);
        let changes = piece_fates[..emitted]
            .iter()
            .enumerate()
            .filter(|(_, fate)| fate.accepted)
            .map(|(j, fate)| Change {
                row: j as u32,
                prev: (!fate.first).then_some(prev_src[j]),
                emptied: fate.empties,
                changed: changed[j],
            });
        changelog::emit(
            Rules::of(&self.plan),
            changes,
            &self.schema,
            &keys,
            &before_after(prev, traced),
        )
    }
}
