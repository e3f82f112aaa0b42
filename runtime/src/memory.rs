//! Memory accounting: every allocation that grows with data is reserved
//! against an operator's budget first, so exceeding it is an error value
//! and never an abort.

use arrow_array::Array;

use crate::error::{AggError, Result};

/// An operator's memory budget and the bytes accounted against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    limit: usize,
    used: usize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes with nothing in use.
    pub fn new(limit: usize) -> Self {
        MemoryBudget { limit, used: 0 }
    }

    /// A budget that never refuses (`usize::MAX` bytes).
    pub fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// Accounts `bytes` more, or returns [`AggError::MemoryBudget`] and
    /// changes nothing when that would pass the limit. Call it before
    /// allocating.
    pub fn try_reserve(&mut self, bytes: usize) -> Result<()> {
        match self.used.checked_add(bytes) {
            Some(total) if total <= self.limit => {
                self.used = total;
                Ok(())
            }
            _ => Err(AggError::MemoryBudget {
                used: self.used,
                requested: bytes,
                budget: self.limit,
            }),
        }
    }

    /// Returns `bytes` to the budget (saturating at zero).
    pub fn release(&mut self, bytes: usize) {
        self.used = self.used.saturating_sub(bytes);
    }

    /// Bytes accounted now.
    pub fn used(&self) -> usize {
        self.used
    }

    /// The budget in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes that can still be reserved.
    pub fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Replaces the accounted total, e.g. after re-measuring state or a
    /// restore. May leave `used` above the limit; the next
    /// [`try_reserve`](Self::try_reserve) then fails.
    pub fn set_used(&mut self, bytes: usize) {
        self.used = bytes;
    }
}

/// Bytes an Arrow array's buffers hold (capacity, children included), for
/// accounting batches kept in state or in a bundle.
pub fn estimated_bytes(array: &dyn Array) -> usize {
    array.get_buffer_memory_size()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    #[test]
    fn reserve_within_limit_and_refuse_past_it() {
        let mut budget = MemoryBudget::new(100);
        budget.try_reserve(60).unwrap();
        budget.try_reserve(40).unwrap();
        assert_eq!(budget.used(), 100);
        assert_eq!(budget.remaining(), 0);
        let err = budget.try_reserve(1).unwrap_err();
        assert!(matches!(
            err,
            AggError::MemoryBudget {
                used: 100,
                requested: 1,
                budget: 100
            }
        ));
        assert_eq!(budget.used(), 100, "a refused request changes nothing");
        budget.release(30);
        budget.try_reserve(30).unwrap();
        assert!(err.to_string().contains("budget 100 bytes"));
    }

    #[test]
    fn overflowing_request_is_refused() {
        let mut budget = MemoryBudget::unlimited();
        budget.try_reserve(10).unwrap();
        assert!(budget.try_reserve(usize::MAX).is_err());
        assert_eq!(budget.used(), 10);
    }

    #[test]
    fn release_and_set_used() {
        let mut budget = MemoryBudget::new(50);
        budget.release(5);
        assert_eq!(budget.used(), 0);
        budget.set_used(70);
        assert_eq!(budget.used(), 70);
        assert_eq!(budget.limit(), 50);
        assert!(budget.try_reserve(0).is_err());
        budget.set_used(10);
        budget.try_reserve(40).unwrap();
    }

    #[test]
    fn estimates_grow_with_data() {
        let small = Int64Array::from(vec![1; 10]);
        let large = Int64Array::from(vec![1; 10_000]);
        assert!(estimated_bytes(&small) >= 80);
        assert!(estimated_bytes(&large) >= 80_000);
        let strings = StringArray::from(vec!["a".repeat(1000); 10]);
        assert!(estimated_bytes(&strings) >= 10_000);
    }
}
