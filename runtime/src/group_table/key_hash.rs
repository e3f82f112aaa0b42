//! Flink key hashes of new groups.

use arrow_array::ArrayRef;

use crate::error::Result;
use crate::flink_key::{hash_bytes_by_words, key_hashes};
use crate::types::SqlType;

/// Appends Flink's `BinaryRowData.hashCode()` of each of the `num_rows`
/// key rows to `out`. With no key columns every row is the empty key row
/// (an 8-byte header of zeros).
pub fn flink_key_hashes(
    keys: &[ArrayRef],
    key_types: &[SqlType],
    num_rows: usize,
    out: &mut Vec<i32>,
) -> Result<()> {
    if keys.is_empty() {
        let empty_row = hash_bytes_by_words(&[0u8; 8]);
        out.extend(std::iter::repeat_n(empty_row, num_rows));
        return Ok(());
    }
    let mut hashes = Vec::with_capacity(num_rows);
    key_hashes(keys, key_types, &mut hashes)?;
    out.extend_from_slice(&hashes);
    Ok(())
}
