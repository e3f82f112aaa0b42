//! The next extreme of a counted multiset without a scan: a binary heap of
//! the values that entered the multiset, best first, from which values
//! that left it are dropped lazily when they reach the top.
//!
//! Flink recomputes MIN/MAX over retracting input by iterating every value
//! when the extreme leaves (`updateMin`), which is quadratic for the
//! common pattern where each retraction removes the extreme (round-robin
//! updates of increasing values, e.g. `MIN(last_seen)` over per-key latest
//! values). The counts live in a hash map; this heap keeps the order, at
//! O(log n) per value that enters and amortized O(log n) per extreme that
//! leaves.
//!
//! The heap is only built when an extreme first leaves (from the values
//! then in the multiset, in O(n)) and kept from then on: most groups never
//! lose their extreme, and a local phase's bundle groups rarely do, so
//! they pay neither the heap's pushes nor its memory.

/// A heap of candidate extremes under an order given per call (`better(a,
/// b)`: `a` is a better extreme than `b`), possibly holding stale values.
#[derive(Debug, Clone)]
pub struct Candidates<K> {
    heap: Vec<K>,
    /// The heap holds every value of the multiset (and stale ones): set by
    /// the first [`best`](Candidates::best); before it, pushes are skipped.
    tracking: bool,
}

impl<K> Default for Candidates<K> {
    fn default() -> Self {
        Candidates {
            heap: Vec::new(),
            tracking: false,
        }
    }
}

impl<K: Clone> Candidates<K> {
    /// Values held, stale ones included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no value is held.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Drops every value, keeping the allocation; the next heap is built
    /// again when needed.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.tracking = false;
    }

    /// Allocated slots.
    pub fn capacity(&self) -> usize {
        self.heap.capacity()
    }

    /// Adds a value that entered the multiset (nothing until the heap is
    /// built).
    pub fn push(&mut self, key: &K, better: impl Fn(&K, &K) -> bool) {
        if !self.tracking {
            return;
        }
        self.heap.push(key.clone());
        let mut i = self.heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !better(&self.heap[i], &self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// The best value still in the multiset (`live`), dropping the stale
    /// ones above it; `None` when none is left. The first call builds the
    /// heap from `keys`, every value of the multiset.
    pub fn best<'a>(
        &mut self,
        keys: impl Iterator<Item = &'a K>,
        live: impl Fn(&K) -> bool,
        better: impl Fn(&K, &K) -> bool,
    ) -> Option<K>
    where
        K: 'a,
    {
        if !self.tracking {
            self.rebuild(keys, &better);
            self.tracking = true;
        }
        while let Some(top) = self.heap.first() {
            if live(top) {
                return Some(top.clone());
            }
            self.pop(&better);
        }
        None
    }

    /// Replaces the values with `keys` (every value of the multiset), when
    /// the stale ones outnumber them.
    pub fn compact<'a>(
        &mut self,
        live_len: usize,
        keys: impl Iterator<Item = &'a K>,
        better: impl Fn(&K, &K) -> bool,
    ) where
        K: 'a,
    {
        if !self.tracking || self.heap.len() <= 2 * live_len + 16 {
            return;
        }
        self.rebuild(keys, better);
    }

    /// Makes the heap of `keys`: Floyd's construction, O(n).
    fn rebuild<'a>(&mut self, keys: impl Iterator<Item = &'a K>, better: impl Fn(&K, &K) -> bool)
    where
        K: 'a,
    {
        self.heap.clear();
        self.heap.extend(keys.cloned());
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i, &better);
        }
    }

    fn pop(&mut self, better: impl Fn(&K, &K) -> bool) {
        let last = self.heap.len() - 1;
        self.heap.swap(0, last);
        self.heap.pop();
        self.sift_down(0, better);
    }

    fn sift_down(&mut self, mut i: usize, better: impl Fn(&K, &K) -> bool) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < n && better(&self.heap[l], &self.heap[best]) {
                best = l;
            }
            if r < n && better(&self.heap[r], &self.heap[best]) {
                best = r;
            }
            if best == i {
                break;
            }
            self.heap.swap(i, best);
            i = best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_live_value_comes_first() {
        let less = |a: &i32, b: &i32| a < b;
        let mut c = Candidates::default();
        // Before the first `best`, nothing is kept: the heap is built from
        // the multiset's values then.
        c.push(&0, less);
        assert!(c.is_empty());
        let values = [5, 3, 9, 3, 1, 7];
        let live = [3, 7, 9];
        assert_eq!(c.best(values.iter(), |v| live.contains(v), less), Some(3));
        assert_eq!(c.len(), 5, "only 1, not live, left");
        // From then on the heap is kept: a push counts, `keys` do not.
        c.push(&2, less);
        assert_eq!(c.best([100].iter(), |v| *v < 6, less), Some(2));
        assert_eq!(c.best([100].iter(), |v| *v > 3, less), Some(5));
        assert_eq!(c.best([100].iter(), |_| false, less), None);
        assert!(c.is_empty());
        let more = |a: &i32, b: &i32| a > b;
        for v in 0..100 {
            c.push(&v, more);
        }
        c.compact(3, [4, 8, 2].iter(), more);
        assert_eq!(c.len(), 3);
        assert_eq!(c.best([100].iter(), |_| true, more), Some(8));
        // Cleared, it waits for the next `best` again.
        c.clear();
        c.push(&50, more);
        assert!(c.is_empty());
        c.compact(0, [1].iter(), more);
        assert!(c.is_empty());
        assert_eq!(c.best([6, 4].iter(), |_| true, more), Some(6));
    }
}
