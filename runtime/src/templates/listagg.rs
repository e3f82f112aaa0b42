//! `listagg`: LISTAGG(x) and LISTAGG(x, separator) over insert-only input
//! (Flink's declarative ListAggFunction): per group the concatenation so
//! far and the latest separator. A row sets the separator (even when its
//! value is NULL) and appends `separator value`; the first non-NULL value
//! starts the concatenation; NULL until then. The global phase merges the
//! partials `(accDelimiter, concatAcc)` the same way, in arrival order.
//!
//! State: [`Concat`](crate::kernel::Concat). The separator, when given, is
//! the call's second argument column (Flink's parser admits only a
//! character literal there). LISTAGG(DISTINCT x) runs under the DISTINCT
//! view, each value concatenated when it first enters the group's set.
//!
//! Declaration, read by aggforge-codegen:
//!
//! ```toml
//! # aggforge-declaration
//! functions = ["LISTAGG"]
//! input = ["insert_only"]
//! distinct_view = true
//! input_reason = "over retracting input Flink keeps the list of live values (ListAggWithRetractAggFunction): template listagg_retract"
//! phases = ["single", "local", "global"]
//! partial = [{ name = "accDelimiter", type = "VARCHAR" }, { name = "concatAcc", type = "VARCHAR" }]
//! result = "VARCHAR"
//! ```
