//! What an operator reports about itself (the Flink operator's metrics):
//! live groups, bytes held and the budget.

use super::GroupAggOperator;

/// A point-in-time view of an operator's size, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperatorStats {
    /// Bytes of state and bundle held now, measured
    /// ([`GroupAggOperator::memory_used`]).
    pub memory_used: usize,
    /// The memory budget in bytes (the plan's `memory_budget_bytes`).
    pub memory_budget: usize,
    /// Groups with state ([`GroupAggOperator::num_groups`]).
    pub groups: usize,
}

impl GroupAggOperator {
    /// Number of groups with state (single, global) or in the open bundle
    /// (local). Kept as groups gain and lose state: O(1).
    pub fn num_groups(&self) -> usize {
        self.live.count()
    }

    /// Bytes of state and bundle held now, measured. O(1) for fixed-width
    /// state; walks the groups for string MIN/MAX and retracting MIN/MAX
    /// (their values' heap bytes), so callers on a hot path rate-limit it.
    pub fn memory_used(&self) -> usize {
        self.measure()
    }

    /// Groups, bytes held and the budget, in one call.
    pub fn stats(&self) -> OperatorStats {
        OperatorStats {
            memory_used: self.memory_used(),
            memory_budget: self.budget.limit(),
            groups: self.num_groups(),
        }
    }
}
