//! aggforge runtime: group tables, generated accumulators, the single,
//! local and global group-aggregate operators with Flink's changelog,
//! snapshots partitioned by key group, and memory accounting.

pub mod accumulator;
#[cfg(feature = "datafusion")]
pub mod datafusion;
pub mod error;
pub mod exchange;
pub mod flink_key;
pub mod generated;
pub mod group_table;
#[cfg(feature = "jit")]
pub mod jit;
pub mod kernel;
pub mod memory;
pub mod operator;
pub mod plan;
pub mod registry;
pub mod snapshot;
pub mod sql_type;
pub mod templates;
pub mod time_zone;
pub mod types;
pub mod window;
pub mod window_agg;
