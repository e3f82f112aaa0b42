//! The typed table for one fixed-width key: open addressing with linear
//! probing and a multiplicative (Fibonacci) hash over the key's bits.
//!
//! Keys compare by their bits, as Flink's BinaryRowData compares bytes:
//! `-0.0` and `0.0` are two keys, NaNs with equal bits are one key. The
//! NULL key is an ordinary group held beside the slots.

use std::fmt::Debug;

const EMPTY: u32 = u32::MAX;
const MIN_CAPACITY: usize = 64;

/// A key's bits as the table stores and hashes them.
pub(crate) trait KeyBits: Copy + Eq + Default + Send + Sync + Debug + 'static {
    /// Slot index for a table of `1 << (64 - shift)` slots.
    fn slot(self, shift: u32) -> usize;
}

impl KeyBits for u64 {
    #[inline(always)]
    fn slot(self, shift: u32) -> usize {
        (self.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
    }
}

impl KeyBits for u128 {
    #[inline(always)]
    fn slot(self, shift: u32) -> usize {
        let folded = (self as u64) ^ ((self >> 64) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        folded.slot(shift)
    }
}

/// Dense group ids for fixed-width keys.
#[derive(Debug)]
pub(crate) struct FixedTable<K: KeyBits> {
    slot_keys: Vec<K>,
    slot_ids: Vec<u32>,
    shift: u32,
    /// Key bits by group id (default bits for the NULL group).
    keys: Vec<K>,
    null_group: Option<u32>,
}

impl<K: KeyBits> FixedTable<K> {
    pub(crate) fn new() -> Self {
        Self::with_capacity(MIN_CAPACITY)
    }

    fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.next_power_of_two().max(MIN_CAPACITY);
        FixedTable {
            slot_keys: vec![K::default(); capacity],
            slot_ids: vec![EMPTY; capacity],
            shift: 64 - capacity.trailing_zeros(),
            keys: Vec::new(),
            null_group: None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The key bits of `group`, `None` for the NULL group.
    #[inline]
    pub(crate) fn key(&self, group: u32) -> Option<K> {
        if self.null_group == Some(group) {
            None
        } else {
            Some(self.keys[group as usize])
        }
    }

    /// The group of the NULL key, creating it (first seen at `row`).
    #[inline]
    pub(crate) fn null_id(&mut self, row: u32, new_rows: &mut Vec<u32>) -> u32 {
        match self.null_group {
            Some(id) => id,
            None => {
                let id = self.keys.len() as u32;
                self.keys.push(K::default());
                self.null_group = Some(id);
                new_rows.push(row);
                id
            }
        }
    }

    /// The group of `key`, creating it (first seen at `row`).
    #[inline(always)]
    pub(crate) fn id(&mut self, key: K, row: u32, new_rows: &mut Vec<u32>) -> u32 {
        let mask = self.slot_ids.len() - 1;
        let mut pos = key.slot(self.shift) & mask;
        loop {
            // SAFETY: `pos & mask <= mask == slot_ids.len() - 1`, and
            // `slot_ids.len() >= MIN_CAPACITY > 0` (so `mask` did not wrap):
            // `with_capacity` is the only place the slot vectors are built,
            // at least `MIN_CAPACITY` long, and `rehash` only replaces them
            // with a fresh table's; nothing else resizes them.
            let id = unsafe { *self.slot_ids.get_unchecked(pos) };
            if id == EMPTY {
                return self.insert_at(pos, key, row, new_rows);
            }
            // SAFETY: `pos < slot_ids.len()` as above, and `slot_keys` always
            // has the length of `slot_ids`: both are built together with
            // one `capacity` in `with_capacity` and replaced together in
            // `rehash`.
            if unsafe { *self.slot_keys.get_unchecked(pos) } == key {
                return id;
            }
            pos = (pos + 1) & mask;
        }
    }

    #[cold]
    #[inline(never)]
    fn insert_at(&mut self, pos: usize, key: K, row: u32, new_rows: &mut Vec<u32>) -> u32 {
        let id = self.keys.len() as u32;
        self.slot_keys[pos] = key;
        self.slot_ids[pos] = id;
        self.keys.push(key);
        new_rows.push(row);
        if (self.keys.len() + 1) * 2 > self.slot_ids.len() {
            self.rehash(self.slot_ids.len() * 2);
        }
        id
    }

    fn rehash(&mut self, capacity: usize) {
        let mut fresh = Self::with_capacity(capacity);
        let mask = fresh.slot_ids.len() - 1;
        for (pos, &id) in self.slot_ids.iter().enumerate() {
            if id == EMPTY {
                continue;
            }
            let key = self.slot_keys[pos];
            let mut at = key.slot(fresh.shift);
            while fresh.slot_ids[at] != EMPTY {
                at = (at + 1) & mask;
            }
            fresh.slot_keys[at] = key;
            fresh.slot_ids[at] = id;
        }
        self.slot_keys = fresh.slot_keys;
        self.slot_ids = fresh.slot_ids;
        self.shift = fresh.shift;
    }

    /// Drops every group with id `len` or above and gives back the slots
    /// the dropped groups made the table grow by.
    pub(crate) fn truncate(&mut self, len: usize) {
        if len >= self.keys.len() {
            return;
        }
        if self.null_group.is_some_and(|id| id as usize >= len) {
            self.null_group = None;
        }
        for id in self.slot_ids.iter_mut() {
            if *id != EMPTY && *id as usize >= len {
                *id = EMPTY;
            }
        }
        self.keys.truncate(len);
        self.keys.shrink_to_fit();
        // Emptied slots may break probe chains: rebuild them, at the size
        // the remaining groups need.
        let capacity = ((len + 1) * 2).next_power_of_two().min(self.slot_ids.len());
        self.rehash(capacity);
    }

    /// Drops every group, keeping the allocation.
    pub(crate) fn clear(&mut self) {
        self.slot_ids.fill(EMPTY);
        self.keys.clear();
        self.null_group = None;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.slot_keys.capacity() * std::mem::size_of::<K>()
            + self.slot_ids.capacity() * 4
            + self.keys.capacity() * std::mem::size_of::<K>()
    }
}
