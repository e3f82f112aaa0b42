//! The runtime's integration tests, one module per file beside this one,
//! linked into one test binary: each binary links every generated kernel,
//! so one instead of some twenty saves gigabytes of disk and most of the
//! link time. Run one file's tests with
//! `cargo test -p aggforge-runtime --test integration <file>::`.
//!
//! Two stay separate test targets: `distinct_allocations` installs a
//! counting global allocator, and `spec_copy_inner` is what
//! `spec_copy` builds again against edited specs.

mod common;

mod changelog;
#[cfg(feature = "datafusion")]
mod datafusion;
mod flink_accumulator_views;
mod flink_state;
mod flink_views;
mod golden_snapshot;
mod group_table;
mod incremental;
#[cfg(feature = "jit")]
mod jit_cli;
#[cfg(feature = "jit")]
mod jit_fused;
mod keygroup;
mod no_calls;
mod operators;
mod reference_model;
mod registry;
mod retract;
mod shared_views;
mod single_value;
mod snapshot_format;
mod spec_copy;
mod stats;
mod templates;
mod ttl;
mod two_phase_distinct;
mod window_agg;
