//! `count_star`: COUNT(*) (Flink's Count1AggFunction): the number of rows
//! per group as BIGINT, decremented by retractions (also the record
//! counter Flink adds to two-phase plans over retracting input).
//!
//! Declaration: function COUNT_STAR; insert-only and retracting input;
//! phases single, local, global; partial layout `[count: BIGINT]`; result
//! BIGINT; no parameters and no argument. State:
//! [`Counts`](crate::kernel::Counts) with no argument type in the spec.

pub use crate::kernel::Counts;
