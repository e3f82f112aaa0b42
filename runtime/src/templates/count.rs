//! `count`: COUNT(x) (Flink's CountAggFunction): the number of non-NULL
//! values per group as BIGINT, decremented by retractions; the global
//! phase adds partial counts. Only the argument's validity is read.
//!
//! Declaration: function COUNT; insert-only and retracting input; phases
//! single, local, global; partial layout `[count: BIGINT]`; result BIGINT;
//! no parameters. State: [`Counts`](crate::kernel::Counts), whose
//! [`TemplateState`](super::TemplateState) reads the argument column's
//! validity when the spec has an argument type.

pub use crate::kernel::Counts;
