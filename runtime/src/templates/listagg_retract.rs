//! `listagg_retract`: LISTAGG(x) and LISTAGG(x, separator) over retracting
//! input (Flink's ListAggWithRetractAggFunction /
//! ListAggWsWithRetractAggFunction): per group the live values in arrival
//! order and the separator of the latest non-NULL row; a retraction
//! removes the first equal live value; the result joins the live values,
//! NULL when none is left.
//!
//! State: [`StringLists`](crate::kernel::StringLists). Two-phase: Flink's
//! accumulator `(list, retractList[, delimiter])` is one struct partial
//! column, merged as Flink's `merge` does (`kernel::string_list_partial`);
//! the local and global phases keep each group's `retractList`. Under the DISTINCT
//! view a value joins the list when it enters the group's set and leaves it
//! on its last retraction.
//!
//! Declaration, read by aggforge-codegen:
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["LISTAGG"]
//! input = ["retracting"]
//! distinct_view = true
//! input_reason = "insert-only LISTAGG keeps one concatenation per group, template listagg"
//! phases = ["single", "local", "global"]
//! result = "VARCHAR"
//! partial = [{ name = "acc", type = "accumulator" }]
//! ```
