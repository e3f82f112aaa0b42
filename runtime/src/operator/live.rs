//! Which groups hold state (Flink's `accState != null`), with their count
//! kept as flags change, so the operator reports its live groups in O(1)
//! (metrics read it after every batch).

use std::ops::Index;

/// By group id: whether the group has state; plus how many do.
#[derive(Debug, Default)]
pub(super) struct LiveGroups {
    flags: Vec<bool>,
    count: usize,
}

impl LiveGroups {
    /// Number of group ids covered (live or not).
    pub(super) fn len(&self) -> usize {
        self.flags.len()
    }

    /// Bytes the flags hold (capacity).
    pub(super) fn capacity(&self) -> usize {
        self.flags.capacity()
    }

    /// Number of groups with state.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// Whether group `g` has state; false for ids not covered.
    pub(super) fn is_live(&self, g: usize) -> bool {
        self.flags.get(g).copied().unwrap_or(false)
    }

    /// Covers group ids `0..n`: new ones without state, ids from `n` on
    /// dropped (with their count).
    pub(super) fn resize(&mut self, n: usize) {
        if n < self.flags.len() {
            self.count -= self.flags[n..].iter().filter(|&&l| l).count();
        }
        self.flags.resize(n, false);
    }

    /// Marks group `g` (covered) as having state.
    pub(super) fn set(&mut self, g: usize) {
        let flag = &mut self.flags[g];
        if !*flag {
            *flag = true;
            self.count += 1;
        }
    }

    /// Marks group `g` (covered) as without state.
    pub(super) fn unset(&mut self, g: usize) {
        let flag = &mut self.flags[g];
        if *flag {
            *flag = false;
            self.count -= 1;
        }
    }

    /// Forgets every group (ids start over), keeping the allocation.
    pub(super) fn clear(&mut self) {
        self.flags.clear();
        self.count = 0;
    }
}

impl Index<usize> for LiveGroups {
    type Output = bool;

    fn index(&self, g: usize) -> &bool {
        &self.flags[g]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_follows_the_flags() {
        let mut live = LiveGroups::default();
        live.resize(4);
        assert_eq!((live.len(), live.count()), (4, 0));
        live.set(1);
        live.set(1);
        live.set(3);
        assert_eq!(live.count(), 2, "setting twice counts once");
        assert!(live[1] && !live[0] && live.is_live(3));
        assert!(!live.is_live(9), "ids not covered read as without state");
        live.unset(1);
        live.unset(1);
        live.unset(0);
        assert_eq!(
            live.count(),
            1,
            "unsetting twice or a dead group counts once"
        );
        live.set(0);
        live.resize(3);
        assert_eq!(
            (live.len(), live.count()),
            (3, 1),
            "dropping id 3 drops its count"
        );
        live.clear();
        assert_eq!((live.len(), live.count()), (0, 0));
        live.resize(1);
        assert!(!live[0], "cleared ids start without state");
    }
}
