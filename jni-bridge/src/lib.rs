//! JNI bridge between Apache Flink and the aggforge runtime.
//!
//! The Flink integration (operators, planner hook, C Data Interface) is
//! built in the Flink acceleration issue; this crate re-exports the runtime
//! so the cdylib links it today.

pub use aggforge_runtime as runtime;
