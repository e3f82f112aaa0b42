//! Flink key hashes of new groups.

use arrow_array::ArrayRef;

use crate::error::Result;
use crate::types::SqlType;

/// Appends Flink's `BinaryRowData.hashCode()` of each of the `num_rows`
/// key rows to `out`. With no key columns every row is the empty key row.
pub fn flink_key_hashes(
    keys: &[ArrayRef],
    key_types: &[SqlType],
    num_rows: usize,
    out: &mut Vec<i32>,
) -> Result<()> {
    // TEMPORARY until the `state` branch lands: a stand-in hash.
    let _ = key_types;
    if keys.is_empty() {
        out.extend(std::iter::repeat_n(0, num_rows));
        return Ok(());
    }
    let converter = arrow_row::RowConverter::new(
        keys.iter()
            .map(|k| arrow_row::SortField::new(k.data_type().clone()))
            .collect(),
    )?;
    let rows = converter.convert_columns(keys)?;
    let state = ahash::RandomState::with_seeds(1, 2, 3, 4);
    out.extend(rows.iter().map(|r| state.hash_one(r.as_ref()) as i32));
    Ok(())
}
