//! `count`: COUNT(x) (Flink's CountAggFunction): the number of non-NULL
//! values per group as BIGINT, decremented by retractions; the global
//! phase adds partial counts. Only the argument's validity is read.
//!
//! State: [`Counts`](crate::kernel::Counts), whose
//! [`TemplateState`](super::TemplateState) reads the argument column's
//! validity when the spec has an argument type.
//!
//! Declaration, read by aggforge-codegen: spec entries name only functions,
//! input, distinct, types and phases; the template is chosen by function and
//! input, and its partial layout (Flink's field order), result type and
//! parameters come from here, per numeric class where they differ.
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["COUNT"]
//! input = ["insert_only", "retracting"]
//! distinct_view = true
//! phases = ["single", "local", "global"]
//! partial = [{ name = "count", type = "BIGINT" }]
//! result = "BIGINT"
//! ```

pub use crate::kernel::Counts;
