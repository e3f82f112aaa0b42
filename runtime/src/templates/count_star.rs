//! `count_star`: COUNT(*) (Flink's Count1AggFunction): the number of rows
//! per group as BIGINT, decremented by retractions (also the record
//! counter Flink adds to two-phase plans over retracting input).
//!
//! State: [`Counts`](crate::kernel::Counts) with no argument type in the spec.
//!
//! Declaration, read by aggforge-codegen: spec entries name only functions,
//! input, distinct, types and phases; the template is chosen by function and
//! input, and its partial layout (Flink's field order), result type and
//! parameters come from here, per numeric class where they differ.
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["COUNT_STAR"]
//! input = ["insert_only", "retracting"]
//! phases = ["single", "local", "global"]
//! partial = [{ name = "count1", type = "BIGINT" }]
//! result = "BIGINT"
//! ```

pub use crate::kernel::Counts;
