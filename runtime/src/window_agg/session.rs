//! SESSION windows (Flink's `SessionUnsliceAssigner` with its merging
//! window set): per group key, a row at `ts` opens the window
//! `[ts, ts + gap)`, which merges with every session of the group it
//! intersects, touching ones included (Flink's `TimeWindow.intersects` is
//! closed); a row bridging two sessions merges them into one. A row whose
//! window merges with nothing and has already fired is late and dropped
//! (counted); one that joins a live session is taken, even when it alone
//! would be late. A session fires when the watermark reaches its end - 1,
//! and is forgotten: a later row in its time range starts a new session.
//!
//! Timers are lazy: a session's timer stays at the end it had when it was
//! registered (or the earliest of the merged sessions' timers); when it
//! comes due and the session has grown since, it is registered again at
//! the session's end. Rows that extend a session therefore touch no timer,
//! and the timers are a plain heap with no index.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use arrow_array::{BooleanArray, RecordBatch};
use arrow_select::filter::filter_record_batch;

use super::WindowAggOperator;
use crate::error::{AggError, Result};

/// One session of a group: the window `[start, end)`, the slot holding its
/// accumulators, and the end its pending timer was registered at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Session {
    pub start: i64,
    pub end: i64,
    pub slot: u32,
    pub timer: i64,
}

/// Each group's live sessions, disjoint and sorted by start, and their
/// timers: a heap of `(end, group)`, earliest first. An entry whose group
/// has no session with that timer any more (merged away, fired) is
/// skipped when it comes due, so nothing is ever removed from the heap.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    by_group: HashMap<u32, Vec<Session>>,
    len: usize,
    timers: BinaryHeap<Reverse<(i64, u32)>>,
}

impl Sessions {
    /// Live sessions in all groups.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every live session with its group.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Session)> + '_ {
        self.by_group
            .iter()
            .flat_map(|(&g, sessions)| sessions.iter().map(move |&s| (g, s)))
    }

    /// The earliest timer (possibly stale).
    pub fn first_timer(&self) -> Option<i64> {
        self.timers.peek().map(|Reverse((end, _))| *end)
    }

    /// Makes `group`'s session whose timer is `end` due at `end`.
    fn schedule(&mut self, group: u32, end: i64) {
        self.timers.push(Reverse((end, group)));
    }

    /// Adds a session to `group` (restore), keeping the sessions sorted.
    pub fn insert(&mut self, group: u32, session: Session) {
        let sessions = self.by_group.entry(group).or_default();
        let at = sessions.partition_point(|s| s.start < session.start);
        sessions.insert(at, session);
        self.len += 1;
    }

    /// Renames every group `g` to `renamed[g]` (after the group table was
    /// compacted).
    pub fn rename_groups(&mut self, renamed: &[u32]) {
        self.by_group = self
            .by_group
            .drain()
            .map(|(g, s)| (renamed[g as usize], s))
            .collect();
        // Stale entries may name groups that left the table.
        self.timers = self
            .timers
            .drain()
            .filter_map(|Reverse((end, g))| {
                let g = *renamed.get(g as usize)?;
                (g != u32::MAX).then_some(Reverse((end, g)))
            })
            .collect();
    }

    /// Bytes held, roughly.
    pub fn memory_bytes(&self) -> usize {
        self.by_group.capacity() * 40
            + self.len * std::mem::size_of::<Session>()
            + self.timers.capacity() * 16
    }
}

/// What one row does to its group's sessions.
enum Placement {
    /// Late: merges with no session and its window has fired.
    Late,
    /// Folds into this slot.
    Fold(u32),
    /// Folds into `target` after the slots `sources` (sessions it bridged)
    /// are merged into it.
    Merge { target: u32, sources: Vec<u32> },
}

impl WindowAggOperator {
    /// Places every row into its group's sessions, in row order, then folds
    /// the rows: in runs between the rows that merge two sessions with
    /// state, so every accumulator sees its rows and merges in Flink's
    /// order.
    pub(super) fn process_sessions(&mut self, batch: &RecordBatch) -> Result<()> {
        let gap = self.window.gap_ms;
        let times = self.times(batch)?;
        let input = self.read(batch)?;
        // At most one new session per row.
        self.reserve(input.num_rows, &input)?;
        let mut ids = Vec::with_capacity(input.num_rows);
        self.table.intern(&input.keys, input.num_rows, &mut ids)?;
        let mut slots: Vec<Option<u32>> = Vec::with_capacity(ids.len());
        let mut merges: Vec<(usize, u32, Vec<u32>)> = Vec::new();
        for (row, (&g, &ts)) in ids.iter().zip(times.iter()).enumerate() {
            match self.place(g, ts, ts.wrapping_add(gap)) {
                Placement::Late => {
                    self.late_dropped += 1;
                    slots.push(None);
                }
                Placement::Fold(slot) => slots.push(Some(slot)),
                Placement::Merge { target, sources } => {
                    merges.push((row, target, sources));
                    slots.push(Some(target));
                }
            }
        }
        let capacity = self.slots.capacity();
        for acc in &mut self.accs {
            acc.resize(capacity);
        }
        let mut from = 0;
        for (row, target, sources) in merges {
            self.fold_rows(batch, from, row, &slots)?;
            self.merge_slots(&sources, &vec![target; sources.len()])?;
            for slot in sources {
                self.free_slot(slot);
            }
            from = row;
        }
        self.fold_rows(batch, from, batch.num_rows(), &slots)
    }

    /// Places a row of `group` whose own window is `[start, end)`.
    fn place(&mut self, group: u32, start: i64, end: i64) -> Placement {
        let watermark = self.watermark;
        let sessions = self.sessions.by_group.entry(group).or_default();
        // Sessions are disjoint and sorted: the ones the window intersects
        // are a run.
        let first = sessions.partition_point(|s| s.end < start);
        let last = first + sessions[first..].partition_point(|s| s.start <= end);
        if first == last {
            if self.window.is_late(end, watermark) {
                if sessions.is_empty() {
                    self.sessions.by_group.remove(&group);
                }
                return Placement::Late;
            }
            let slot = self.slots.scratch();
            sessions.insert(
                first,
                Session {
                    start,
                    end,
                    slot,
                    timer: end,
                },
            );
            self.sessions.len += 1;
            self.refs.add(group);
            self.sessions.schedule(group, end);
            return Placement::Fold(slot);
        }
        if last - first == 1 {
            // The common case: the row extends one session.
            let s = &mut sessions[first];
            s.start = s.start.min(start);
            s.end = s.end.max(end);
            return Placement::Fold(s.slot);
        }
        let merged: Vec<Session> = sessions.drain(first..last).collect();
        let kept = Session {
            start: merged.iter().map(|s| s.start).fold(start, i64::min),
            end: merged.iter().map(|s| s.end).fold(end, i64::max),
            slot: merged[0].slot,
            timer: merged.iter().map(|s| s.timer).min().unwrap_or(end),
        };
        sessions.insert(first, kept);
        let sources: Vec<u32> = merged[1..].iter().map(|s| s.slot).collect();
        self.sessions.len -= sources.len();
        for _ in &sources {
            self.refs.drop(group);
        }
        if sources.is_empty() {
            Placement::Fold(kept.slot)
        } else {
            Placement::Merge {
                target: kept.slot,
                sources,
            }
        }
    }

    /// Folds rows `from..to` of the batch into their slots (late rows left
    /// out).
    fn fold_rows(
        &mut self,
        batch: &RecordBatch,
        from: usize,
        to: usize,
        slots: &[Option<u32>],
    ) -> Result<()> {
        if from == to {
            return Ok(());
        }
        let placed = &slots[from..to];
        let rows = batch.slice(from, to - from);
        let (rows, slots): (RecordBatch, Vec<u32>) = if placed.iter().all(Option::is_some) {
            (rows, placed.iter().flatten().copied().collect())
        } else {
            let keep: BooleanArray = placed.iter().map(|s| Some(s.is_some())).collect();
            (
                filter_record_batch(&rows, &keep)?,
                placed.iter().flatten().copied().collect(),
            )
        };
        if slots.is_empty() {
            return Ok(());
        }
        let input = self.read(&rows)?;
        self.fold(&input, &slots)
    }

    /// Fires every session whose end the watermark reached, in end order;
    /// a due timer of a session that grew since is registered again at its
    /// end.
    pub(super) fn fire_sessions(&mut self) -> Result<Option<RecordBatch>> {
        let watermark = self.watermark;
        let mut fired: Vec<(u32, Session)> = Vec::new();
        while let Some(due) = self
            .sessions
            .first_timer()
            .filter(|&t| self.window.is_fired(t, watermark))
        {
            let Some(Reverse((_, g))) = self.sessions.timers.pop() else {
                break;
            };
            let Some(sessions) = self.sessions.by_group.get_mut(&g) else {
                continue;
            };
            let Some(at) = sessions.iter().position(|s| s.timer == due) else {
                continue;
            };
            if sessions[at].end != due {
                let end = sessions[at].end;
                sessions[at].timer = end;
                self.sessions.schedule(g, end);
                continue;
            }
            fired.push((g, sessions.remove(at)));
            if sessions.is_empty() {
                self.sessions.by_group.remove(&g);
            }
        }
        if fired.is_empty() {
            return Ok(None);
        }
        self.sessions.len -= fired.len();
        let groups: Vec<u32> = fired.iter().map(|f| f.0).collect();
        let results: Vec<u32> = fired.iter().map(|f| f.1.slot).collect();
        let bounds = (
            fired.iter().map(|f| f.1.start).collect(),
            fired.iter().map(|f| f.1.end).collect(),
        );
        let emitted = self.non_empty(&results)?;
        let batch = self.window_rows(&groups, &results, &bounds, &emitted)?;
        for (g, session) in fired {
            self.free_slot(session.slot);
            self.refs.drop(g);
        }
        self.compact_if_sparse()?;
        Ok(batch)
    }

    /// Restores one session of `group` (its state goes to the returned
    /// slot); a session overlapping one already restored is an error.
    pub(super) fn restore_session(&mut self, group: u32, start: i64, end: i64) -> Result<u32> {
        if let Some(sessions) = self.sessions.by_group.get(&group) {
            if sessions.iter().any(|s| s.start <= end && s.end >= start) {
                return Err(AggError::Snapshot(format!(
                    "session [{start}, {end}) of a group overlaps another restored session"
                )));
            }
        }
        let slot = self.slots.scratch();
        self.sessions.insert(
            group,
            Session {
                start,
                end,
                slot,
                timer: end,
            },
        );
        self.refs.add(group);
        self.sessions.schedule(group, end);
        Ok(slot)
    }
}
