//! The membership view of Flink's DistinctInfo: one hash table per group
//! from each distinct value to a cell of per-call state, shared by every
//! DISTINCT call over the same argument, so a row is probed once however
//! many calls (each with its own FILTER) read the view.
//!
//! A cell holds, as Flink's distinct MapView value does:
//! - over insert-only input ([`CellMode::Bits`]), one bit per call, set
//!   once the call has accepted the value (`calls.div_ceil(64)` words, so
//!   any number of calls);
//! - over retracting input ([`CellMode::Counts`]), one signed count per
//!   call: an insert adds 1, a retraction subtracts 1, a count may go
//!   negative (a retraction before its insert), and an entry whose counts
//!   are all 0 is removed.
//!
//! Calls are independent columns of the cells, so folding the calls one at
//! a time or together gives the same transitions: the view only shares the
//! probe and the memory. Cells of one word sit inline in the table entry;
//! wider cells live in an arena the entry indexes.

use std::borrow::Borrow;
use std::hash::BuildHasher;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array};
use arrow_buffer::BooleanBufferBuilder;
use hashbrown::HashTable;

use super::distinct::ViewKey;
use crate::accumulator::DistinctRows;
use crate::error::{AggError, Result};
use crate::kernel::multiset::counted_list;
use crate::kernel::{is_retract, Rows};

/// Row kind the inner state sees for a value leaving a call's set (-D).
pub(crate) const LEAVES: i8 = 3;

/// What a cell's words hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellMode {
    /// Insert-only input: one bit per call.
    Bits,
    /// Retracting input: one signed count per call.
    Counts,
}

/// The view's hasher: foldhash (hashbrown's own, measured 26 % fewer
/// instructions per row than ahash here) with a fixed seed, so the order
/// of a snapshot's entries follows from the values' history alone.
fn view_hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0x5851_f42d_4c95_7f2d)
}

type Table<K> = HashTable<(<K as ViewKey>::Key, u64)>;

/// One DISTINCT view over carrier `K` for `calls` calls.
#[derive(Debug)]
pub struct SharedView<K: ViewKey> {
    calls: usize,
    mode: CellMode,
    /// Words per cell.
    width: usize,
    /// By group: value -> the cell (width 1) or its arena slot.
    tables: Vec<Table<K>>,
    /// Cells wider than one word, `width` words per slot.
    arena: Vec<u64>,
    /// Arena slots free for reuse.
    free: Vec<u32>,
    hasher: foldhash::fast::FixedState,
    /// Bytes the tables hold beyond `tables` itself: slot capacity and key
    /// payloads, kept up to date on insertion, removal and clearing.
    held: usize,
    /// State in Flink's layout: the entries (group, value) changed since
    /// the log was last cleared, possibly repeated, so that a write-back
    /// writes those entries of Flink's map state only. `None`: no log.
    log: Option<Vec<(u32, K::Key)>>,
}

/// A view's entries changed since its log was cleared, of some groups:
/// the values (one column), `calls` counts per entry (each call's count,
/// 1 for a set bit; all 0: the value left the view) and each group's
/// number of entries.
#[derive(Debug)]
pub struct ChangedEntries {
    /// The changed values.
    pub values: ArrayRef,
    /// Per entry, every call's count.
    pub counts: Vec<i64>,
    /// Per group, its number of entries.
    pub lengths: Vec<usize>,
    /// Counts per entry: the calls of the view.
    pub calls: usize,
}

/// Bytes of one table slot (entry plus control byte).
fn slot_bytes<K: ViewKey>() -> usize {
    std::mem::size_of::<(K::Key, u64)>() + 1
}

impl<K: ViewKey> SharedView<K> {
    /// An empty view for `calls` calls.
    pub fn new(calls: usize, mode: CellMode) -> Self {
        let width = match mode {
            CellMode::Bits => calls.div_ceil(64),
            CellMode::Counts => calls,
        }
        .max(1);
        SharedView {
            calls,
            mode,
            width,
            tables: Vec::new(),
            arena: Vec::new(),
            free: Vec::new(),
            hasher: view_hasher(),
            held: 0,
            log: None,
        }
    }

    /// Starts logging the entries that change (state in Flink's layout).
    pub fn start_log(&mut self) {
        if self.log.is_none() {
            self.log = Some(Vec::new());
        }
    }

    /// Forgets the logged changes: they were written back.
    pub fn clear_log(&mut self) {
        if let Some(log) = &mut self.log {
            log.clear();
        }
    }

    /// The logged entries of the listed groups (in order; see
    /// [`ChangedEntries`]), or `None` without a log.
    pub fn changed_entries(
        &self,
        groups: &[u32],
        value_type: &arrow_schema::DataType,
    ) -> Result<Option<ChangedEntries>> {
        let Some(log) = &self.log else {
            return Ok(None);
        };
        let mut order: Vec<usize> = (0..log.len()).collect();
        order.sort_by_key(|&i| log[i].0);
        let mut values = Vec::new();
        let mut counts = Vec::new();
        let mut lengths = Vec::with_capacity(groups.len());
        for &g in groups {
            let start = order.partition_point(|&i| log[i].0 < g);
            let end = order.partition_point(|&i| log[i].0 <= g);
            let mut seen: HashTable<&K::Key> = HashTable::new();
            let before = values.len();
            for &i in &order[start..end] {
                let key = &log[i].1;
                let hash = self.hasher.hash_one(key.borrow());
                if seen.find(hash, |other| *other == key).is_some() {
                    continue;
                }
                seen.insert_unique(hash, key, |other| self.hasher.hash_one((*other).borrow()));
                let cell = self.tables.get(g as usize).and_then(|table| {
                    table
                        .find(hash, |(held, _)| held == key)
                        .map(|&(_, cell)| cell)
                });
                values.push(K::value(key));
                counts.extend(
                    (0..self.calls).map(|call| cell.map_or(0, |cell| self.count(cell, call))),
                );
            }
            lengths.push(values.len() - before);
        }
        let entries = values.len();
        Ok(Some(ChangedEntries {
            values: K::build(values, vec![true; entries], value_type)?,
            counts,
            lengths,
            calls: self.calls,
        }))
    }

    /// Number of calls the cells hold.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Number of groups held.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// True when no group holds a value.
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(|table| table.is_empty())
    }

    /// What the cells hold.
    pub fn mode(&self) -> CellMode {
        self.mode
    }

    /// Upper bound of the bytes one folded row adds to one call's share of
    /// the view: an entry and room for the table doubling. Each call of a
    /// shared view reserves this, which also covers a wide cell's word per
    /// call in the arena.
    pub fn bytes_per_input_row() -> usize {
        3 * slot_bytes::<K>()
    }

    /// Inline bytes one more group costs.
    pub fn bytes_per_group() -> usize {
        std::mem::size_of::<Table<K>>()
    }

    /// Bytes held, heap included.
    pub fn memory_bytes(&self) -> usize {
        let log = self.log.as_ref().map_or(0, |log| {
            log.capacity() * std::mem::size_of::<(u32, K::Key)>()
                + log.iter().map(|(_, key)| K::key_heap(key)).sum::<usize>()
        });
        log + self.tables.capacity() * std::mem::size_of::<Table<K>>()
            + self.held
            + self.arena.capacity() * 8
            + self.free.capacity() * 4
    }

    fn table_bytes(table: &Table<K>) -> usize {
        table.capacity() * slot_bytes::<K>()
            + table.iter().map(|(key, _)| K::key_heap(key)).sum::<usize>()
    }

    /// Grows (or shrinks) to `n` groups; new groups are empty.
    pub fn resize(&mut self, n: usize) {
        if n < self.tables.len() {
            for g in n..self.tables.len() {
                self.drop_table(g);
            }
            self.tables.truncate(n);
        } else {
            self.tables.resize_with(n, HashTable::new);
        }
    }

    /// Empties group `g`'s table, releasing its bytes and arena slots.
    fn drop_table(&mut self, g: usize) {
        let table = std::mem::take(&mut self.tables[g]);
        self.held -= Self::table_bytes(&table);
        if self.width > 1 {
            self.free.extend(table.iter().map(|&(_, slot)| slot as u32));
        }
    }

    /// Empties the listed groups (every call's columns); a log records
    /// every value they held as changed (gone).
    pub fn clear(&mut self, groups: &[u32]) {
        for &g in groups {
            if let (Some(log), Some(table)) = (&mut self.log, self.tables.get(g as usize)) {
                log.extend(table.iter().map(|(key, _)| (g, key.clone())));
            }
            if (g as usize) < self.tables.len() {
                self.drop_table(g as usize);
            }
        }
    }

    /// Drops every group.
    pub fn reset(&mut self) {
        self.tables.clear();
        self.arena.clear();
        self.free.clear();
        self.held = 0;
    }

    /// Runs `f` on the cell of `value` in group `g` (a zero cell when the
    /// value is new) and keeps the entry only while its cell is not all 0.
    /// `f` is called from one place, so it inlines into the fold.
    /// `CAN_EMPTY`: whether `f` may clear a cell (never over insert-only
    /// input, whose bits only get set).
    #[inline(always)]
    fn with_cell<const CAN_EMPTY: bool>(
        &mut self,
        g: usize,
        value: K::Ref<'_>,
        f: impl FnOnce(&mut [u64]),
    ) {
        let SharedView {
            tables,
            arena,
            free,
            hasher,
            width,
            held,
            log,
            ..
        } = self;
        let width = *width;
        let hasher = &*hasher;
        let table = &mut tables[g];
        let probed = &mut *table;
        let (hash, found) = K::with_probe(value, move |probe| {
            let probed = probed;
            let hash = hasher.hash_one(probe);
            (
                hash,
                probed.find_mut(hash, |(key, _)| key.borrow() == probe),
            )
        });
        let existed = found.is_some();
        let mut fresh = 0u64;
        let mut fresh_slot = 0usize;
        let cell: &mut [u64] = match found {
            Some(entry) if width == 1 => std::slice::from_mut(&mut entry.1),
            Some(entry) => {
                let slot = entry.1 as usize;
                &mut arena[slot * width..(slot + 1) * width]
            }
            None if width == 1 => std::slice::from_mut(&mut fresh),
            None => {
                fresh_slot = match free.pop() {
                    Some(slot) => slot as usize,
                    None => {
                        arena.resize(arena.len() + width, 0);
                        arena.len() / width - 1
                    }
                };
                let cell = &mut arena[fresh_slot * width..(fresh_slot + 1) * width];
                cell.fill(0);
                cell
            }
        };
        let before = cell[0];
        f(cell);
        // A wide cell is logged whenever touched: a change may be in any word.
        if let Some(log) = log {
            if width > 1 || cell[0] != before {
                log.push((g as u32, K::key(value)));
            }
        }
        let emptied = (CAN_EMPTY || !existed)
            && if width == 1 {
                cell[0] == 0
            } else {
                cell.iter().all(|&w| w == 0)
            };
        match (existed, emptied) {
            (true, false) => {}
            (false, true) => {
                if width > 1 {
                    free.push(fresh_slot as u32);
                }
            }
            (false, false) => {
                let stored = if width == 1 { fresh } else { fresh_slot as u64 };
                let capacity = table.capacity();
                let key = K::key(value);
                *held += K::key_heap(&key);
                table.insert_unique(hash, (key, stored), |(key, _)| {
                    hasher.hash_one(key.borrow())
                });
                *held += (table.capacity() - capacity) * slot_bytes::<K>();
            }
            (true, true) => {
                let removed = K::with_probe(value, |probe| {
                    table
                        .find_entry(hash, |(key, _)| key.borrow() == probe)
                        .ok()
                        .map(|entry| entry.remove().0)
                });
                if let Some((key, slot)) = removed {
                    *held -= K::key_heap(&key);
                    if width > 1 {
                        free.push(slot as u32);
                    }
                }
            }
        }
    }

    /// Folds a batch through the view for the listed calls (`(call, rows)`:
    /// the rows each call accepts, argument non-NULL and FILTER true),
    /// reading each row's group in `ids`, value in `values` and kind in
    /// `kinds`: per listed call, in order, the rows that changed its set.
    /// `RETRACTING` must match the view's mode (counts over retracting
    /// input, bits otherwise).
    pub fn fold<const RETRACTING: bool>(
        &mut self,
        ids: &[u32],
        values: &K::Reader<'_>,
        kinds: Option<&[i8]>,
        calls: &[(usize, &Rows)],
    ) -> Result<Vec<DistinctRows>> {
        if (self.mode == CellMode::Counts) != RETRACTING || calls.iter().any(|c| c.0 >= self.calls)
        {
            return Err(AggError::Input(format!(
                "a DISTINCT view of {} calls ({:?}) folded for calls {:?}, retracting {RETRACTING}",
                self.calls,
                self.mode,
                calls.iter().map(|c| c.0).collect::<Vec<_>>()
            )));
        }
        if let (1, [(0, rows)]) = (self.calls, calls) {
            return Ok(vec![self.fold_one::<RETRACTING>(ids, values, kinds, rows)]);
        }
        let n = ids.len();
        let words = self.calls.div_ceil(64).max(1);
        let mut position = vec![usize::MAX; self.calls];
        for (p, &(call, _)) in calls.iter().enumerate() {
            position[call] = p;
        }
        let changes: Vec<BooleanBufferBuilder> = calls
            .iter()
            .map(|_| {
                let mut b = BooleanBufferBuilder::new(n);
                b.append_n(n, false);
                b
            })
            .collect();
        let inner_kinds: Vec<Option<Vec<i8>>> =
            calls.iter().map(|_| kinds.map(|_| vec![0i8; n])).collect();
        let mut out = FoldOut {
            position,
            changes,
            inner_kinds,
        };
        let row = |i: usize| (i, ids[i] as usize, K::get(values, i), kinds);
        match calls {
            // One call within 64: a constant one-word accept mask.
            [(call, rows)] if words == 1 => {
                let accept = [1u64 << call];
                rows.for_each(|i| self.step::<RETRACTING, _>(&mut out, row(i), &accept));
            }
            [(call, rows)] => {
                let mut accept = vec![0u64; words];
                accept[call / 64] = 1 << (call % 64);
                rows.for_each(|i| self.step::<RETRACTING, _>(&mut out, row(i), &accept[..]));
            }
            _ => {
                let mut accept = vec![0u64; n * words];
                for &(call, rows) in calls {
                    let (word, bit) = (call / 64, 1u64 << (call % 64));
                    rows.for_each(|i| accept[i * words + word] |= bit);
                }
                for (i, row_accept) in accept.chunks_exact(words).enumerate() {
                    if row_accept.iter().any(|&w| w != 0) {
                        self.step::<RETRACTING, _>(&mut out, row(i), row_accept);
                    }
                }
            }
        }
        Ok(out
            .changes
            .into_iter()
            .zip(out.inner_kinds)
            .map(|(mut changes, kinds)| DistinctRows {
                changes: BooleanArray::new(changes.finish(), None),
                kinds,
            })
            .collect())
    }

    /// [`SharedView::fold`] for a view of one call (the common case): the
    /// cell is the entry's one word, with no accept mask or call positions.
    fn fold_one<const RETRACTING: bool>(
        &mut self,
        ids: &[u32],
        values: &K::Reader<'_>,
        kinds: Option<&[i8]>,
        rows: &Rows,
    ) -> DistinctRows {
        let n = ids.len();
        let mut changes = BooleanBufferBuilder::new(n);
        changes.append_n(n, false);
        let mut inner_kinds = kinds.map(|_| vec![0i8; n]);
        rows.for_each(|i| {
            let retract = RETRACTING && kinds.is_some_and(|k| is_retract(k[i]));
            let mut changed = false;
            self.with_cell::<RETRACTING>(ids[i] as usize, K::get(values, i), |cell| {
                changed = if RETRACTING {
                    count(&mut cell[0], retract)
                } else {
                    set_bits(&mut cell[0], 1) != 0
                };
            });
            if changed {
                changes.set_bit(i, true);
                if retract {
                    if let Some(kinds) = inner_kinds.as_mut() {
                        kinds[i] = LEAVES;
                    }
                }
            }
        });
        DistinctRows {
            changes: BooleanArray::new(changes.finish(), None),
            kinds: inner_kinds,
        }
    }

    /// One row of [`SharedView::fold`]: probes its value once, then
    /// applies each accepted call's column of the cell (`accept`: the
    /// row's accept bits) and records which calls' sets changed.
    #[inline(always)]
    fn step<const RETRACTING: bool, A: AsRef<[u64]> + ?Sized>(
        &mut self,
        out: &mut FoldOut,
        (i, g, value, kinds): (usize, usize, K::Ref<'_>, Option<&[i8]>),
        accept: &A,
    ) {
        let retract = RETRACTING && kinds.is_some_and(|k| is_retract(k[i]));
        self.with_cell::<RETRACTING>(g, value, |cell| {
            for (word, &accepted) in accept.as_ref().iter().enumerate() {
                let mut bits = if RETRACTING {
                    accepted
                } else {
                    set_bits(&mut cell[word], accepted)
                };
                while bits != 0 {
                    let call = word * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let changed = !RETRACTING || count(&mut cell[call], retract);
                    if changed {
                        let p = out.position[call];
                        out.changes[p].set_bit(i, true);
                        if retract {
                            if let Some(kinds) = out.inner_kinds[p].as_mut() {
                                kinds[i] = LEAVES;
                            }
                        }
                    }
                }
            }
        });
    }

    /// Adds call `call`'s counted partial entries (`counts` of `keys`,
    /// row `r`'s entries `offsets[r]..offsets[r + 1]` in group `ids[r]`) to
    /// the view as Flink's distinct merge does: per entry, whether it
    /// entered (count <= 0 to > 0) or left (> 0 to <= 0) the call's set,
    /// and its group. Checked before anything changes.
    pub fn merge_call(
        &mut self,
        call: usize,
        (ids, offsets): (&[u32], &[i32]),
        keys: (&K::Reader<'_>, &ArrayRef),
        counts: &Int64Array,
        name: &str,
    ) -> Result<MergedEntries> {
        let (keys, key_column) = keys;
        let nulls = key_column.nulls();
        let entries = key_column.len();
        if self.mode == CellMode::Bits && counts.values().iter().any(|&c| c < 0) {
            return Err(AggError::Input(format!(
                "{name}: a partial view of an insert-only aggregate retracts a value"
            )));
        }
        let mut entered = BooleanBufferBuilder::new(entries);
        entered.append_n(entries, false);
        let mut left = vec![false; entries];
        let mut groups = vec![0u32; entries];
        let mode = self.mode;
        if call >= self.calls {
            return Err(AggError::Input(format!(
                "{name}: call {call} merged into a view of {} calls",
                self.calls
            )));
        }
        for (row, &g) in ids.iter().enumerate() {
            for e in offsets[row] as usize..offsets[row + 1] as usize {
                let delta = counts.value(e);
                if delta == 0 || nulls.is_some_and(|n| n.is_null(e)) {
                    continue;
                }
                groups[e] = g;
                let mut change = None;
                self.with_cell::<true>(g as usize, K::get(keys, e), |cell| match mode {
                    CellMode::Bits => {
                        let (word, bit) = (call / 64, 1u64 << (call % 64));
                        if cell[word] & bit == 0 {
                            cell[word] |= bit;
                            change = Some(false);
                        }
                    }
                    CellMode::Counts => {
                        let before = cell[call] as i64;
                        let after = before + delta;
                        cell[call] = after as u64;
                        if before <= 0 && after > 0 {
                            change = Some(false);
                        } else if before > 0 && after <= 0 {
                            change = Some(true);
                        }
                    }
                });
                if let Some(leaves) = change {
                    entered.set_bit(e, true);
                    left[e] = leaves;
                }
            }
        }
        Ok(MergedEntries {
            groups,
            changes: BooleanArray::new(entered.finish(), None),
            leaves: left,
        })
    }

    /// Call `call`'s count of a cell (1 for a set bit), 0 when it has none.
    fn count(&self, cell: u64, call: usize) -> i64 {
        let words = match self.width {
            1 => std::slice::from_ref(&cell),
            w => &self.arena[cell as usize * w..(cell as usize + 1) * w],
        };
        match self.mode {
            CellMode::Bits => ((words[call / 64] >> (call % 64)) & 1) as i64,
            CellMode::Counts => words[call] as i64,
        }
    }

    /// Call `call`'s view of the listed groups as one `{key, count}` list
    /// per group (`value_type`: the argument's Arrow type).
    pub fn list(
        &self,
        call: usize,
        groups: &[u32],
        value_type: &arrow_schema::DataType,
        name: &str,
    ) -> Result<ArrayRef> {
        let mut keys = Vec::new();
        let mut counts = Vec::new();
        let mut lengths = Vec::with_capacity(groups.len());
        for &g in groups {
            let g = crate::kernel::group_index(g, self.tables.len(), name)?;
            let before = keys.len();
            for (key, cell) in &self.tables[g] {
                let count = self.count(*cell, call);
                if count != 0 {
                    keys.push(K::value(key));
                    counts.push(count);
                }
            }
            lengths.push(keys.len() - before);
        }
        let entries = keys.len();
        let key_column = K::build(keys, vec![true; entries], value_type)?;
        counted_list(value_type, key_column, counts, lengths)
    }

    /// Checks call `call`'s snapshot lists (group `groups[i]` holds entries
    /// `offsets[i]..offsets[i + 1]` of `keys`/`counts`): no count 0, no
    /// value twice in a group, no negative count over insert-only input.
    pub fn check_lists(
        &self,
        groups: &[u32],
        offsets: &[i32],
        keys: &K::Reader<'_>,
        counts: &Int64Array,
        name: &str,
    ) -> Result<()> {
        for i in 0..groups.len() {
            crate::kernel::group_index(groups[i], self.tables.len(), name)?;
            let mut seen: HashTable<K::Key> = HashTable::new();
            for e in offsets[i] as usize..offsets[i + 1] as usize {
                let count = counts.value(e);
                if count == 0 || (self.mode == CellMode::Bits && count < 0) {
                    return Err(AggError::Input(format!(
                        "{name}: a DISTINCT view entry has count {count}"
                    )));
                }
                let key = K::key(K::get(keys, e));
                let hash = self.hasher.hash_one(key.borrow());
                if seen.find(hash, |other| other == &key).is_some() {
                    return Err(AggError::Input(format!(
                        "{name}: a DISTINCT view lists a value twice"
                    )));
                }
                seen.insert_unique(hash, key, |other| self.hasher.hash_one(other.borrow()));
            }
        }
        Ok(())
    }

    /// Sets call `call`'s column of the listed groups from lists already
    /// passed by [`SharedView::check_lists`]; the other calls' columns stay.
    /// With a log, the entries set are logged as changed unless `loaded`
    /// (read back from Flink's state backend, which holds them already).
    pub fn restore_call(
        &mut self,
        call: usize,
        groups: &[u32],
        offsets: &[i32],
        keys: &K::Reader<'_>,
        counts: &Int64Array,
        loaded: bool,
    ) {
        let log = if loaded { self.log.take() } else { None };
        self.set_call(call, groups, offsets, keys, counts);
        if log.is_some() {
            self.log = log;
        }
    }

    fn set_call(
        &mut self,
        call: usize,
        groups: &[u32],
        offsets: &[i32],
        keys: &K::Reader<'_>,
        counts: &Int64Array,
    ) {
        let (word, bit) = (call / 64, 1u64 << (call % 64));
        let mode = self.mode;
        let clear = |cell: &mut [u64]| match mode {
            CellMode::Bits => cell[word] &= !bit,
            CellMode::Counts => cell[call] = 0,
        };
        for (i, &g) in groups.iter().enumerate() {
            let g = g as usize;
            // Clear the call's column in place, dropping cells left empty.
            let SharedView {
                tables,
                arena,
                free,
                width,
                held,
                ..
            } = self;
            let width = *width;
            tables[g].retain(|(key, stored)| {
                let cell = match width {
                    1 => std::slice::from_mut(stored),
                    w => &mut arena[*stored as usize * w..(*stored as usize + 1) * w],
                };
                clear(cell);
                let keep = cell.iter().any(|&w| w != 0);
                if !keep {
                    *held -= K::key_heap(key);
                    if width > 1 {
                        free.push(*stored as u32);
                    }
                }
                keep
            });
            for e in offsets[i] as usize..offsets[i + 1] as usize {
                let count = counts.value(e);
                self.with_cell::<true>(g, K::get(keys, e), |cell| match mode {
                    CellMode::Bits => cell[word] |= bit,
                    CellMode::Counts => cell[call] = count as u64,
                });
            }
        }
    }
}

/// Sets the `accepted` bits of a cell word (insert-only input): the bits
/// newly set, i.e. the calls whose sets the value enters.
#[inline(always)]
fn set_bits(word: &mut u64, accepted: u64) -> u64 {
    let newly = accepted & !*word;
    *word |= accepted;
    newly
}

/// Adds one insert (or `retract`: subtracts one) to a call's count word
/// (retracting input): whether the call's set changed, i.e. the value
/// entered (count was 0) or left (count was 1).
#[inline(always)]
fn count(word: &mut u64, retract: bool) -> bool {
    let before = *word as i64;
    let after = if retract { before - 1 } else { before + 1 };
    *word = after as u64;
    before == if retract { 1 } else { 0 }
}

/// What a fold records per listed call: its position among the listed
/// calls (by view call), the rows that changed its set, and its kinds.
struct FoldOut {
    position: Vec<usize>,
    changes: Vec<BooleanBufferBuilder>,
    inner_kinds: Vec<Option<Vec<i8>>>,
}

/// What merging a call's partial entries did: per entry its group, whether
/// it changed the call's set (the inner template's FILTER over the
/// entries) and whether that change was the value leaving.
#[derive(Debug)]
pub struct MergedEntries {
    /// Group of each entry.
    pub groups: Vec<u32>,
    /// Entries that entered or left the call's set.
    pub changes: BooleanArray,
    /// By entry: the change was the value leaving.
    pub leaves: Vec<bool>,
}
