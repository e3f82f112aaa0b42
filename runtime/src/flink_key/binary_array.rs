//! The bytes Flink's `BinaryArrayWriter` writes for an `ARRAY<T>` field of
//! a grouping key (the key projection writes it with `writeArray`, which
//! converts the value with `ArrayDataSerializer.toBinaryArray` and copies
//! those bytes into the row's variable part).
//!
//! Layout of an array of `n` elements, every integer little-endian:
//!
//! * `n` as a 4-byte int;
//! * a null bit set of `((n + 31) / 32) * 4` bytes: element `i` is bit
//!   `i % 8` of byte `i / 8`;
//! * the elements, each `BinaryArrayData.calculateFixLengthPartSize` wide
//!   (1 byte BOOLEAN/TINYINT, 2 SMALLINT, 4 INT/FLOAT/DATE/TIME, else 8),
//!   the whole fixed part zero-padded to 8 bytes; a NULL element is its
//!   null bit and zero bytes (`setNullAt(pos, type)`: no variable part
//!   is reserved, unlike a NULL field of a row);
//! * the variable part (long strings, non-compact decimals and
//!   timestamps) with offsets counted from the array's first byte.

use arrow_array::cast::AsArray;
use arrow_array::ArrayRef;

use super::binary_row::{resolve, ResolvedColumn};
use crate::error::{AggError, Result};
use crate::types::SqlType;

/// An ARRAY key column resolved to its offsets and typed element buffers.
pub(super) struct ArrayKeyColumn<'a> {
    offsets: &'a [i32],
    elements: ResolvedColumn<'a>,
    width: usize,
}

impl<'a> ArrayKeyColumn<'a> {
    /// Resolves list column `index` declared `sql` (an `ARRAY<T>`).
    pub(super) fn resolve(index: usize, array: &'a ArrayRef, sql: &SqlType) -> Result<Self> {
        let element = sql.element().ok_or_else(|| {
            AggError::Input(format!(
                "key column {index} is a list but its SQL type {sql} is not an ARRAY"
            ))
        })?;
        let list = array.as_list::<i32>();
        let elements = resolve(index, list.values(), &element)?;
        let width = elements.values.element_width();
        Ok(ArrayKeyColumn {
            offsets: list.value_offsets(),
            elements,
            width,
        })
    }

    /// Appends the BinaryArrayData bytes of non-null row `row` to `out` and
    /// returns their length (a multiple of 8).
    pub(super) fn write(&self, row: usize, out: &mut Vec<u8>) -> usize {
        let first = self.offsets[row] as usize;
        let count = self.offsets[row + 1] as usize - first;
        let base = out.len();
        let header = 4 + count.div_ceil(32) * 4;
        let fixed = (header + self.width * count).div_ceil(8) * 8;
        out.resize(base + fixed, 0);
        out[base..base + 4].copy_from_slice(&(count as i32).to_le_bytes());
        for i in 0..count {
            let element = first + i;
            if self.elements.nulls.is_some_and(|n| n.is_null(element)) {
                out[base + 4 + (i >> 3)] |= 1 << (i & 7);
                continue;
            }
            let at = base + header + self.width * i;
            self.elements
                .values
                .write_value(element, out, at, base, true);
        }
        out.len() - base
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::types::Int32Type;
    use arrow_array::ListArray;

    use super::super::KeyRowEncoder;
    use super::*;

    fn row_bytes(column: ArrayRef, ty: &str, row: usize) -> Vec<u8> {
        let columns = [column];
        let encoder = KeyRowEncoder::new(&columns, &[SqlType::of(ty)]).unwrap();
        let mut out = Vec::new();
        encoder.write_row(row, &mut out);
        out
    }

    #[test]
    fn int_array_with_a_null_element() {
        let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(7), None, Some(-1)]),
        ]));
        let bytes = row_bytes(list, "ARRAY<INT>", 0);
        // Row: 8 null-bit bytes, the slot, then the array (24 bytes).
        assert_eq!(bytes.len(), 16 + 24);
        assert_eq!(&bytes[8..16], &((16u64 << 32) | 24).to_le_bytes());
        let array = &bytes[16..];
        assert_eq!(&array[..4], &3i32.to_le_bytes());
        assert_eq!(array[4], 0b010, "element 1 is NULL");
        assert_eq!(&array[8..12], &7i32.to_le_bytes());
        assert_eq!(&array[12..16], &[0; 4]);
        assert_eq!(&array[16..20], &(-1i32).to_le_bytes());
        assert_eq!(&array[20..24], &[0; 4], "fixed part padded to 8 bytes");
    }

    #[test]
    fn long_strings_point_into_the_array() {
        let mut builder = ListBuilder::new(StringBuilder::new());
        builder.values().append_value("abc");
        builder.values().append_value("abcdefghij");
        builder.append(true);
        let bytes = row_bytes(Arc::new(builder.finish()), "ARRAY<STRING>", 0);
        let array = &bytes[16..];
        // 4 + 4 header bytes, two 8-byte elements, then "abcdefghij" padded.
        assert_eq!(array.len(), 24 + 16);
        assert_eq!(array[8..11], *b"abc");
        assert_eq!(array[15], 0x80 | 3);
        assert_eq!(&array[16..24], &((24u64 << 32) | 10).to_le_bytes());
        assert_eq!(&array[24..34], b"abcdefghij");
    }
}
