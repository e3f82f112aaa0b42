//! Shared code of the aggforge benches: seeded data generators, the
//! general (boxed scalar) baseline, the kernel suite's inputs, and, behind the `datafusion-compare`
//! feature, DataFusion's own group accumulators on the same data.

pub mod call_lists;
pub mod data;
pub mod general;
pub mod kernel_input;
pub mod ours;

#[cfg(feature = "datafusion-compare")]
pub mod datafusion_compare;
