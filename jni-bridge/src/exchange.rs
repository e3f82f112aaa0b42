//! The columnar exchange's sending half by handle, free of JNI: routers
//! split transposed batches by the channel that owns their keys and encode
//! one message per channel ([`aggforge_runtime::exchange`]).

use aggforge_runtime::exchange::{encode, ExchangeRouter, Mark, RoutedPart};
use aggforge_runtime::plan::AggPlan;
use aggforge_runtime::types::ROW_KIND_COLUMN;
use arrow_array::RecordBatch;

use crate::error::{BridgeError, BridgeResult};
use crate::ffi::import_batch;
use crate::registry::Registry;

/// Every open router of the process.
static ROUTERS: Registry<ExchangeRouter> = Registry::new();

/// Creates a router for the batches the plan's operator reads, over
/// `channels` channels and `max_parallelism` key groups; returns its
/// handle.
pub fn create(plan_json: &str, channels: i32, max_parallelism: i32) -> BridgeResult<u64> {
    let plan = AggPlan::from_json(plan_json)?;
    let count = |what: &str, n: i32| {
        u32::try_from(n).map_err(|_| BridgeError::Ffi(format!("{what} {n} is negative")))
    };
    let router = ExchangeRouter::new(
        &plan,
        count("channels", channels)?,
        count("max parallelism", max_parallelism)?,
    )?;
    Ok(ROUTERS.insert(router))
}

/// Routes the batch exported at `in_array`/`in_schema`: one message per
/// channel with rows, as `(channel, message)`, each carrying `marks` (the
/// in-band watermarks, positions in the batch) at its own rows' positions.
/// The export is consumed even when the call fails.
///
/// # Safety
/// `in_array`/`in_schema` must meet [`import_batch`]'s contract.
pub unsafe fn route(
    handle: u64,
    in_array: i64,
    in_schema: i64,
    marks: &[Mark],
) -> BridgeResult<Vec<(u32, Vec<u8>)>> {
    // SAFETY: our caller guarantees `import_batch`'s contract.
    let batch = unsafe { import_batch(in_array, in_schema) }?;
    ROUTERS.with(handle, |router| {
        encode_all(router.route_marked(&batch, marks)?)
    })
}

/// In-band watermarks from Java's flat `[position, watermark, ...]` pairs.
pub fn marks_of(pairs: &[i64]) -> BridgeResult<Vec<Mark>> {
    if !pairs.len().is_multiple_of(2) {
        return Err(BridgeError::Ffi(format!(
            "in-band watermarks come in pairs, got {} numbers",
            pairs.len()
        )));
    }
    pairs
        .chunks_exact(2)
        .map(|pair| {
            let position = u32::try_from(pair[0]).map_err(|_| {
                BridgeError::Ffi(format!(
                    "in-band watermark position {} is out of range",
                    pair[0]
                ))
            })?;
            Ok(Mark {
                position,
                watermark: pair[1],
            })
        })
        .collect()
}

/// Holds an operator's output `batch` for the next [`route_held`], without
/// its row kinds (the receiving aggregate reads none); returns the rows
/// held now.
pub fn hold_output(handle: u64, batch: RecordBatch) -> BridgeResult<usize> {
    let batch = match batch.schema().index_of(ROW_KIND_COLUMN) {
        Ok(kinds) => {
            let mut batch = batch;
            batch.remove_column(kinds);
            batch
        }
        Err(_) => batch,
    };
    ROUTERS.with(handle, |router| Ok(router.hold(batch)?))
}

/// Routes the held batches as one: one message per channel with rows.
pub fn route_held(handle: u64) -> BridgeResult<Vec<(u32, Vec<u8>)>> {
    ROUTERS.with(handle, |router| {
        let parts = router.route_held()?;
        encode_all(
            parts
                .into_iter()
                .map(|(c, part)| (c, part, Vec::new()))
                .collect(),
        )
    })
}

/// One message per routed part.
fn encode_all(parts: Vec<RoutedPart>) -> BridgeResult<Vec<(u32, Vec<u8>)>> {
    let mut messages = Vec::with_capacity(parts.len());
    for (channel, part, marks) in parts {
        messages.push((channel, encode(channel, &part, &marks)?));
    }
    Ok(messages)
}

/// Closes the router; its handle is invalid from now on.
pub fn close(handle: u64) -> BridgeResult<()> {
    ROUTERS.remove(handle)
}
