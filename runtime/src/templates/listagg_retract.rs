//! `listagg_retract`: LISTAGG(x) and LISTAGG(x, separator) over retracting
//! input (Flink's ListAggWithRetractAggFunction /
//! ListAggWsWithRetractAggFunction): per group the live values in arrival
//! order and the separator of the latest non-NULL row; a retraction
//! removes the first equal live value; the result joins the live values,
//! NULL when none is left.
//!
//! State: [`StringLists`](crate::kernel::StringLists). Under the DISTINCT
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
//! phases = ["single"]
//! phases_reason = "Flink's two-phase partial of LISTAGG over retracting input holds ListViews (list and retractList), which have no Arrow layout here yet"
//! result = "VARCHAR"
//! ```
