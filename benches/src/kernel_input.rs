//! The kernel suite's inputs, shared by the criterion suite
//! (`benches/kernels.rs`) and the callgrind driver (`bin/kernel_loop.rs`):
//! seeded bundles per specialization (retracting ones with every fourth
//! row a -U of the row before), the local partials the global phase
//! merges, and a fresh accumulator.

use aggforge_runtime::accumulator::{BatchUpdate, GroupAccumulator};
use aggforge_runtime::registry::Admission;
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::ArrayRef;

use crate::data::{with_retractions, Stream, BATCH_ROWS};

/// Seed of every kernel-suite stream.
pub const SEED: u64 = 0x6B65_726E;

/// One prepared input bundle.
pub struct Bundle {
    /// Argument columns.
    pub columns: Vec<ArrayRef>,
    /// Group id per row.
    pub group_ids: Vec<u32>,
    /// The same ids as `usize` (DataFusion's group indices).
    pub group_indices: Vec<usize>,
    /// Row kinds, for retracting specializations.
    pub row_kinds: Option<Vec<i8>>,
}

impl Bundle {
    /// The bundle as an accumulator update.
    pub fn update(&self) -> BatchUpdate<'_> {
        BatchUpdate {
            args: &self.columns,
            group_ids: &self.group_ids,
            filter: None,
            row_kinds: self.row_kinds.as_deref(),
            distinct: None,
        }
    }
}

/// `count` seeded bundles over `num_keys` keys for the admission's input
/// mode.
pub fn bundles(
    admission: &Admission,
    arg: Option<SqlType>,
    num_keys: usize,
    count: usize,
) -> Result<Vec<Bundle>, String> {
    let types: Vec<SqlType> = arg.into_iter().collect();
    let stream = Stream::new(&types, num_keys, count, SEED);
    stream
        .groupings
        .iter()
        .zip(stream.columns)
        .map(|(grouping, columns)| match admission.input {
            InputMode::InsertOnly => Ok(Bundle {
                columns,
                group_ids: grouping.group_ids.clone(),
                group_indices: grouping.group_indices.clone(),
                row_kinds: None,
            }),
            InputMode::Retracting => {
                let r =
                    with_retractions(&columns, &grouping.group_ids).map_err(|e| e.to_string())?;
                Ok(Bundle {
                    columns: r.columns,
                    group_indices: r.group_ids.iter().map(|&g| g as usize).collect(),
                    group_ids: r.group_ids,
                    row_kinds: Some(r.row_kinds),
                })
            }
        })
        .collect()
}

/// The local partials of every bundle: each row its own group, so the
/// partial columns have one row per input row.
pub fn partials_of(
    admission: &Admission,
    arg: Option<&SqlType>,
    inputs: &[Bundle],
) -> Result<Vec<Vec<ArrayRef>>, String> {
    let identity: Vec<u32> = (0..BATCH_ROWS as u32).collect();
    inputs
        .iter()
        .map(|b| {
            let mut local = admission
                .create_call(arg.copied().as_slice(), Phase::Local)
                .map_err(|e| e.to_string())?;
            local.resize(BATCH_ROWS);
            local
                .update(&BatchUpdate {
                    group_ids: &identity,
                    ..b.update()
                })
                .map_err(|e| e.to_string())?;
            local.partials(&identity).map_err(|e| e.to_string())
        })
        .collect()
}

/// A fresh accumulator of the admission in `phase`, holding `num_keys`
/// groups.
pub fn fresh(
    admission: &Admission,
    arg: Option<&SqlType>,
    phase: Phase,
    num_keys: usize,
) -> Result<Box<dyn GroupAccumulator>, String> {
    let mut acc = admission
        .create_call(arg.copied().as_slice(), phase)
        .map_err(|e| e.to_string())?;
    acc.resize(num_keys);
    Ok(acc)
}
