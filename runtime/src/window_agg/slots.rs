//! A window aggregate's state index: which accumulator slot holds a group's
//! slice (Flink's key and namespace), and the windows due to fire (Flink's
//! event-time timers, one per group and window end).

use std::collections::BTreeMap;

use hashbrown::{HashMap, HashSet};

/// `(group id, slice end)` to accumulator slot. Freed slots are reused;
/// the accumulators are indexed by slot and sized to [`SliceSlots::capacity`].
#[derive(Debug, Default)]
pub(super) struct SliceSlots {
    index: HashMap<(u32, i64), u32>,
    /// By slot: its group and slice, or `None` when free or scratch.
    owner: Vec<Option<(u32, i64)>>,
    free: Vec<u32>,
}

impl SliceSlots {
    /// The slot of `group`'s slice `slice`, if it has state.
    pub fn get(&self, group: u32, slice: i64) -> Option<u32> {
        self.index.get(&(group, slice)).copied()
    }

    /// The slot of `group`'s slice `slice`, created when missing; the flag
    /// says whether it was created now.
    pub fn get_or_insert(&mut self, group: u32, slice: i64) -> (u32, bool) {
        if let Some(&slot) = self.index.get(&(group, slice)) {
            return (slot, false);
        }
        let slot = self.allocate(Some((group, slice)));
        self.index.insert((group, slice), slot);
        (slot, true)
    }

    /// A slot outside the index (a merge target for one firing); give it
    /// back with [`SliceSlots::release`].
    pub fn scratch(&mut self) -> u32 {
        self.allocate(None)
    }

    fn allocate(&mut self, owner: Option<(u32, i64)>) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.owner[slot as usize] = owner;
                slot
            }
            None => {
                self.owner.push(owner);
                (self.owner.len() - 1) as u32
            }
        }
    }

    /// Frees `slot` (its accumulators must be cleared by the caller);
    /// returns the group it held state for (`None` for scratch).
    pub fn release(&mut self, slot: u32) -> Option<u32> {
        let key = self.owner[slot as usize].take();
        if let Some(key) = key {
            self.index.remove(&key);
        }
        self.free.push(slot);
        key.map(|(g, _)| g)
    }

    /// Renames every group `g` to `renamed[g]` (after the group table was
    /// compacted; every group with state has a new id).
    pub fn rename_groups(&mut self, renamed: &[u32]) {
        self.index = self
            .index
            .drain()
            .map(|((g, s), slot)| ((renamed[g as usize], s), slot))
            .collect();
        for (g, _) in self.owner.iter_mut().flatten() {
            *g = renamed[*g as usize];
        }
    }

    /// Slots ever allocated: the accumulators' size.
    pub fn capacity(&self) -> usize {
        self.owner.len()
    }

    /// Slots holding state.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Every slot with state: `(group, slice, slot)`.
    pub fn iter(&self) -> impl Iterator<Item = (u32, i64, u32)> + '_ {
        self.index.iter().map(|(&(g, s), &slot)| (g, s, slot))
    }

    /// Forgets every slot (the accumulators are reset by the caller).
    pub fn clear(&mut self) {
        self.index.clear();
        self.owner.clear();
        self.free.clear();
    }

    /// Bytes held, roughly.
    pub fn memory_bytes(&self) -> usize {
        self.index.capacity() * 20 + self.owner.capacity() * 16 + self.free.capacity() * 4
    }
}

/// Windows waiting to fire: by window end, the groups with a pending
/// window there (each pair once, as Flink's timer set keeps it).
#[derive(Debug, Default)]
pub(super) struct Timers {
    by_end: BTreeMap<i64, Vec<u32>>,
    pending: HashSet<(u32, i64)>,
}

impl Timers {
    /// Makes `group`'s window ending at `end` fire when the watermark
    /// passes it (again registering one is a no-op); true when it is new.
    pub fn register(&mut self, group: u32, end: i64) -> bool {
        let new = self.pending.insert((group, end));
        if new {
            self.by_end.entry(end).or_default().push(group);
        }
        new
    }

    /// Renames every group `g` to `renamed[g]` (see
    /// [`SliceSlots::rename_groups`]).
    pub fn rename_groups(&mut self, renamed: &[u32]) {
        for groups in self.by_end.values_mut() {
            for g in groups.iter_mut() {
                *g = renamed[*g as usize];
            }
        }
        self.pending = self
            .pending
            .drain()
            .map(|(g, end)| (renamed[g as usize], end))
            .collect();
    }

    /// The earliest window end with pending windows.
    pub fn first_end(&self) -> Option<i64> {
        self.by_end.first_key_value().map(|(&end, _)| end)
    }

    /// The earliest window end with pending windows, if `due` says it is
    /// due, and its groups (in registration order); they are no longer
    /// pending.
    pub fn pop_due(&mut self, due: impl Fn(i64) -> bool) -> Option<(i64, Vec<u32>)> {
        let (&end, _) = self.by_end.first_key_value()?;
        if !due(end) {
            return None;
        }
        let groups = self.by_end.remove(&end).unwrap_or_default();
        for &g in &groups {
            self.pending.remove(&(g, end));
        }
        Some((end, groups))
    }

    /// Every pending `(group, end)`.
    pub fn iter(&self) -> impl Iterator<Item = (u32, i64)> + '_ {
        self.pending.iter().copied()
    }

    /// Pending windows.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Bytes held, roughly.
    pub fn memory_bytes(&self) -> usize {
        self.pending.capacity() * 16 + self.by_end.len() * 48 + self.pending.len() * 4
    }
}

/// By group id: how many slices with state and pending windows it has; a
/// group with none can leave the group table.
#[derive(Debug, Default)]
pub(super) struct GroupRefs {
    counts: Vec<u32>,
    live: usize,
}

impl GroupRefs {
    /// One more slice or pending window of `group`.
    pub fn add(&mut self, group: u32) {
        let g = group as usize;
        if g >= self.counts.len() {
            self.counts.resize(g + 1, 0);
        }
        if self.counts[g] == 0 {
            self.live += 1;
        }
        self.counts[g] += 1;
    }

    /// One slice or pending window of `group` less.
    pub fn drop(&mut self, group: u32) {
        let count = &mut self.counts[group as usize];
        *count -= 1;
        if *count == 0 {
            self.live -= 1;
        }
    }

    /// Whether `group` has a slice or a pending window.
    pub fn has(&self, group: u32) -> bool {
        self.counts.get(group as usize).is_some_and(|&c| c > 0)
    }

    /// Groups with a slice or a pending window.
    pub fn live(&self) -> usize {
        self.live
    }

    /// The counts of groups `old[i]`, now named `new[i]`.
    pub fn renamed(&self, old: &[u32], new: &[u32]) -> GroupRefs {
        let mut counts = vec![0; new.iter().max().map_or(0, |&m| m as usize + 1)];
        for (&o, &n) in old.iter().zip(new) {
            counts[n as usize] = self.counts[o as usize];
        }
        GroupRefs {
            counts,
            live: old.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_scratch_stays_out_of_the_index() {
        let mut slots = SliceSlots::default();
        assert_eq!(slots.get_or_insert(1, 10), (0, true));
        assert_eq!(slots.get_or_insert(1, 10), (0, false));
        assert_eq!(slots.get_or_insert(2, 10), (1, true));
        let scratch = slots.scratch();
        assert_eq!(scratch, 2);
        assert_eq!(slots.len(), 2);
        slots.release(0);
        slots.release(scratch);
        assert_eq!(slots.get(1, 10), None);
        assert_eq!(slots.get_or_insert(3, 20), (2, true));
        assert_eq!(slots.capacity(), 3);
    }

    #[test]
    fn timers_pop_in_end_order_once_due() {
        let mut timers = Timers::default();
        timers.register(5, 2000);
        timers.register(4, 1000);
        timers.register(5, 2000);
        timers.register(6, 1000);
        assert_eq!(timers.len(), 3);
        assert_eq!(timers.pop_due(|end| end <= 500), None);
        assert_eq!(timers.pop_due(|end| end <= 1500), Some((1000, vec![4, 6])));
        assert_eq!(timers.pop_due(|end| end <= 1500), None);
        assert_eq!(timers.pop_due(|_| true), Some((2000, vec![5])));
        assert_eq!(timers.len(), 0);
    }
}
