//! Per-bundle bookkeeping of the mini-batch operators: the groups a
//! bundle touched in first-touch order (the order Flink's bundle HashMap
//! receives its keys), each one's slot, and for single-phase mini-batch
//! the result each group had before the bundle.

use arrow_array::ArrayRef;

/// No slot / no previous result.
pub(crate) const NONE: u32 = u32::MAX;

/// The groups of the open bundle.
#[derive(Debug, Default)]
pub(crate) struct Bundle {
    /// Group ids in first-touch order; a group's index here is its slot.
    pub touched: Vec<u32>,
    /// Slot by group id (`NONE` when untouched).
    pub slot_of: Vec<u32>,
    /// By slot: index of the group's pre-bundle result in `prev`, or
    /// `NONE` when the group had no state before the bundle.
    pub prev_pos: Vec<u32>,
    /// Per call: chunks of pre-bundle results, in `prev_pos` order.
    pub prev: Vec<Vec<ArrayRef>>,
    /// Number of pre-bundle results held.
    pub prev_len: usize,
    /// Over retracting input, per accumulator: chunks of pre-bundle state
    /// columns in `prev_pos` order, to roll groups back when Flink would
    /// drop the rest of the bundle.
    pub saved: Vec<Vec<Vec<ArrayRef>>>,
}

impl Bundle {
    /// An empty bundle for `calls` output calls and `accs` accumulators.
    pub(crate) fn new(calls: usize, accs: usize) -> Self {
        Bundle {
            prev: vec![Vec::new(); calls],
            saved: vec![Vec::new(); accs],
            ..Default::default()
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.touched.is_empty()
    }

    /// Grows the by-group index to `groups` groups.
    pub(crate) fn grow(&mut self, groups: usize) {
        if self.slot_of.len() < groups {
            self.slot_of.resize(groups, NONE);
        }
    }

    /// Forgets the bundle, keeping allocations.
    pub(crate) fn clear(&mut self) {
        for &g in &self.touched {
            self.slot_of[g as usize] = NONE;
        }
        self.touched.clear();
        self.prev_pos.clear();
        for chunks in &mut self.prev {
            chunks.clear();
        }
        for chunks in &mut self.saved {
            chunks.clear();
        }
        self.prev_len = 0;
    }

    /// Drops the by-group entries of groups `groups` and above.
    pub(crate) fn truncate_groups(&mut self, groups: usize) {
        self.slot_of.truncate(groups);
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        let chunks: usize = self
            .prev
            .iter()
            .flatten()
            .chain(self.saved.iter().flatten().flatten())
            .map(|a| a.get_array_memory_size())
            .sum();
        (self.touched.capacity() + self.slot_of.capacity() + self.prev_pos.capacity()) * 4 + chunks
    }
}
