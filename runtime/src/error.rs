//! The runtime's error type: every failure is a value that reaches Java as
//! an exception with this message.

use thiserror::Error;

/// Errors raised by accumulators, operators, snapshots and the registry.
#[derive(Debug, Error)]
pub enum AggError {
    /// The plan descriptor is malformed or asks for something unknown.
    #[error("invalid plan: {0}")]
    Plan(String),
    /// A batch does not match what the plan promised.
    #[error("bad input: {0}")]
    Input(String),
    /// Growing state would exceed the operator's memory budget.
    #[error(
        "memory budget exceeded: {used} bytes in use, {requested} more requested, budget {budget} bytes"
    )]
    MemoryBudget {
        /// Bytes accounted before the request.
        used: usize,
        /// Bytes the request needs.
        requested: usize,
        /// The configured budget.
        budget: usize,
    },
    /// A snapshot could not be written or read.
    #[error("snapshot: {0}")]
    Snapshot(String),
    /// An Arrow kernel failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A function failed the query as Flink's would (its own message, e.g.
    /// SINGLE_VALUE's second value); the operator takes no more input.
    #[error("{0}")]
    Failed(String),
    /// A method the specialization does not support in this phase.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Result alias used across the runtime.
pub type Result<T, E = AggError> = std::result::Result<T, E>;
