//! The bytes Flink's `BinaryRowWriter` writes for a grouping-key row, and
//! `BinaryRowData.hashCode()` over them.
//!
//! Layout of a key row of `n` fields, as the planner's generated key
//! projection writes it (writer reset per row, fields in order):
//!
//! * a null bit set of `((n + 63 + 8) / 64) * 8` bytes: byte 0 is the row
//!   kind (always 0, +I, for keys), the null bit of field `i` is bit
//!   `(i + 8) % 8` of byte `(i + 8) / 8`;
//! * one little-endian 8-byte slot per field: fixed-width values in their
//!   low bytes (upper bytes zero), NULL as a zero slot; strings of at most
//!   7 UTF-8 bytes inline with `0x80 | len` in the top byte; longer strings,
//!   non-compact decimals (p > 18) and non-compact timestamps (p > 3) as
//!   `offset << 32 | size` (timestamps: `offset << 32 | nano_of_milli`);
//! * the variable-length part, each value padded with zeros to 8 bytes.
//!   A NULL non-compact decimal still reserves 16 zero bytes and a NULL
//!   non-compact timestamp 8, with the slot holding `offset << 32`.
//!
//! The hash is `MurmurHashUtils.hashBytesByWords` (Murmur3 32-bit, seed 42)
//! over all those bytes read as little-endian 4-byte words.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, TimestampMillisecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray, StringArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, TimeUnit};

use super::binary_array::ArrayKeyColumn;
use crate::error::{AggError, Result};
use crate::types::{Layout, SqlType};

/// Seed of Flink's `MurmurHashUtils`.
const MURMUR_SEED: i32 = 42;
/// Longest string (in UTF-8 bytes) Flink stores inside the fixed slot.
const MAX_INLINE_BYTES: usize = 7;
/// Highest DECIMAL precision stored as an unscaled `long`.
const MAX_COMPACT_DECIMAL_PRECISION: u8 = 18;
/// Highest TIMESTAMP precision stored as epoch milliseconds only.
const MAX_COMPACT_TIMESTAMP_PRECISION: u8 = 3;

#[inline]
fn mix_k1(k1: i32) -> i32 {
    k1.wrapping_mul(0xcc9e2d51_u32 as i32)
        .rotate_left(15)
        .wrapping_mul(0x1b873593)
}

#[inline]
fn mix_h1(h1: i32, k1: i32) -> i32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe6546b64_u32 as i32)
}

/// Murmur3's 32-bit finaliser (`MathUtils.bitMix`, `MurmurHashUtils.fmix`).
#[inline]
pub fn fmix32(h: i32) -> i32 {
    let mut h = h as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85ebca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2ae35);
    h ^= h >> 16;
    h as i32
}

/// Flink's `MurmurHashUtils.hashBytesByWords`: Murmur3 over little-endian
/// 4-byte words, seed 42. Trailing bytes past the last whole word are
/// ignored, as Flink only calls it on word-aligned lengths.
pub fn hash_bytes_by_words(bytes: &[u8]) -> i32 {
    fmix32(mix_words(bytes) ^ bytes.len() as i32)
}

/// Murmur3's rounds over `bytes`' whole little-endian 4-byte words, from
/// seed 42, before the finaliser.
fn mix_words(bytes: &[u8]) -> i32 {
    let mut h1 = MURMUR_SEED;
    for word in bytes.chunks_exact(4) {
        let k = i32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        h1 = mix_h1(h1, mix_k1(k));
    }
    h1
}

/// Flink's `MurmurHashUtils.hashBytes` (seed 42), which
/// `BinaryStringData.hashCode()` is over a string's UTF-8 bytes: the whole
/// 4-byte words little-endian, then each remaining byte, sign-extended, as
/// one more round, then the finaliser with the length.
pub fn hash_bytes(bytes: &[u8]) -> i32 {
    let aligned = bytes.len() / 4 * 4;
    let mut h1 = mix_words(&bytes[..aligned]);
    for &byte in &bytes[aligned..] {
        h1 = mix_h1(h1, mix_k1(byte as i8 as i32));
    }
    fmix32(h1 ^ bytes.len() as i32)
}

/// Java's `BigInteger.toByteArray()` of an unscaled decimal: minimal
/// big-endian two's complement, at least one byte.
fn unscaled_bytes(value: i128) -> ([u8; 16], usize) {
    let magnitude_bits = if value >= 0 {
        128 - value.leading_zeros()
    } else {
        128 - (!value).leading_zeros()
    };
    let len = (magnitude_bits / 8 + 1) as usize;
    (value.to_be_bytes(), len)
}

/// A key column resolved once per batch to its typed Arrow buffers.
pub(super) enum KeyColumn<'a> {
    /// One byte in the slot.
    Byte(&'a [i8]),
    /// Two bytes in the slot.
    Short(&'a [i16]),
    /// Four bytes: Int32, Date32, Time32 layouts (INT, DATE, TIME, ...).
    Int(&'a [i32]),
    /// Eight bytes: Int64 layout, compact timestamp millis.
    Long(&'a [i64]),
    /// FLOAT raw bits.
    Float(&'a [f32]),
    /// DOUBLE raw bits.
    Double(&'a [f64]),
    /// DECIMAL(p <= 18): unscaled long in the slot.
    CompactDecimal(&'a [i128]),
    /// DECIMAL(p > 18): unscaled bytes in a 16-byte variable part.
    WideDecimal(&'a [i128]),
    /// TIMESTAMP(p > 3): millis in the variable part, nanos in the slot.
    WideTimestamp { millis: &'a [i64], nanos: &'a [i32] },
    /// BOOLEAN: one byte 0/1.
    Bool(&'a BooleanArray),
    /// CHAR/VARCHAR UTF-8 bytes.
    Utf8(&'a StringArray),
    /// ARRAY: a BinaryArrayData in the variable part.
    Array(Box<ArrayKeyColumn<'a>>),
}

pub(super) struct ResolvedColumn<'a> {
    pub(super) values: KeyColumn<'a>,
    pub(super) nulls: Option<&'a NullBuffer>,
}

fn type_mismatch(index: usize, sql: &SqlType, found: &DataType) -> AggError {
    AggError::Input(format!(
        "key column {index} is declared {sql} but its Arrow type is {found}"
    ))
}

pub(super) fn resolve<'a>(
    index: usize,
    array: &'a ArrayRef,
    sql: &SqlType,
) -> Result<ResolvedColumn<'a>> {
    let dt = array.data_type();
    let bad = || type_mismatch(index, sql, dt);
    // The key's Arrow layout (its types.toml row) picks how Flink's
    // BinaryRowWriter writes it; the precision picks compact or wide.
    let precision = sql.precision();
    let values = match (sql.layout().ok_or_else(bad)?, dt) {
        (Layout::Int8, DataType::Int8) => {
            KeyColumn::Byte(array.as_primitive::<Int8Type>().values())
        }
        (Layout::Int16, DataType::Int16) => {
            KeyColumn::Short(array.as_primitive::<Int16Type>().values())
        }
        (Layout::Int32, DataType::Int32) => {
            KeyColumn::Int(array.as_primitive::<Int32Type>().values())
        }
        (Layout::Date32, DataType::Date32) => {
            KeyColumn::Int(array.as_primitive::<Date32Type>().values())
        }
        (Layout::Time32Millisecond, DataType::Time32(TimeUnit::Millisecond)) => {
            KeyColumn::Int(array.as_primitive::<Time32MillisecondType>().values())
        }
        (Layout::Int64, DataType::Int64) => {
            KeyColumn::Long(array.as_primitive::<Int64Type>().values())
        }
        (Layout::Float32, DataType::Float32) => {
            KeyColumn::Float(array.as_primitive::<Float32Type>().values())
        }
        (Layout::Float64, DataType::Float64) => {
            KeyColumn::Double(array.as_primitive::<Float64Type>().values())
        }
        (Layout::Decimal128, DataType::Decimal128(_, _)) => {
            let values = array.as_primitive::<Decimal128Type>().values();
            if precision.is_some_and(|p| p <= MAX_COMPACT_DECIMAL_PRECISION) {
                check_valid(
                    index,
                    array,
                    values,
                    |v| i64::try_from(*v).is_ok(),
                    || format!("does not fit the unscaled long of {sql}"),
                )?;
                KeyColumn::CompactDecimal(values)
            } else {
                KeyColumn::WideDecimal(values)
            }
        }
        (Layout::TimestampMillisecond, DataType::Timestamp(TimeUnit::Millisecond, _))
            if precision.is_some_and(|p| p <= MAX_COMPACT_TIMESTAMP_PRECISION) =>
        {
            KeyColumn::Long(array.as_primitive::<TimestampMillisecondType>().values())
        }
        (Layout::StructTimestamp, DataType::Struct(fields)) if fields.len() == 2 => {
            let st = array.as_struct();
            let millis = st
                .column_by_name("millisecond")
                .unwrap_or_else(|| st.column(0));
            let nanos = st
                .column_by_name("nano_of_millisecond")
                .unwrap_or_else(|| st.column(1));
            if millis.data_type() != &DataType::Int64 || nanos.data_type() != &DataType::Int32 {
                return Err(bad());
            }
            let millis = millis.as_primitive::<Int64Type>().values();
            let nanos = nanos.as_primitive::<Int32Type>().values();
            check_valid(
                index,
                array,
                nanos,
                |n| (0..=999_999).contains(n),
                || "has a nano_of_millisecond outside 0..=999999".to_string(),
            )?;
            if precision.is_some_and(|p| p <= MAX_COMPACT_TIMESTAMP_PRECISION) {
                // Flink writes a compact timestamp as its epoch millis.
                KeyColumn::Long(millis)
            } else {
                KeyColumn::WideTimestamp { millis, nanos }
            }
        }
        (Layout::Boolean, DataType::Boolean) => KeyColumn::Bool(array.as_boolean()),
        (Layout::Utf8, DataType::Utf8) => KeyColumn::Utf8(array.as_string::<i32>()),
        (Layout::List, DataType::List(_)) => {
            KeyColumn::Array(Box::new(ArrayKeyColumn::resolve(index, array, sql)?))
        }
        _ => return Err(bad()),
    };
    Ok(ResolvedColumn {
        values,
        nulls: array.nulls().filter(|n| n.null_count() > 0),
    })
}

/// Checks `ok` on every non-null value of a key column.
fn check_valid<T>(
    index: usize,
    array: &ArrayRef,
    values: &[T],
    ok: impl Fn(&T) -> bool,
    problem: impl Fn() -> String,
) -> Result<()> {
    let nulls = array.nulls();
    let bad_row = values
        .iter()
        .enumerate()
        .find(|(row, v)| nulls.is_none_or(|n| n.is_valid(*row)) && !ok(v));
    match bad_row {
        Some((row, _)) => Err(AggError::Input(format!(
            "key column {index} row {row} {}",
            problem()
        ))),
        None => Ok(()),
    }
}

/// Writes Flink key rows for a batch of key columns into one reused
/// buffer, row by row, without allocating per row.
pub struct KeyRowEncoder<'a> {
    columns: Vec<ResolvedColumn<'a>>,
    null_bits_bytes: usize,
    fixed_bytes: usize,
    rows: usize,
}

impl<'a> KeyRowEncoder<'a> {
    /// Checks the columns against their declared SQL types and resolves
    /// their buffers.
    pub fn new(key_columns: &'a [ArrayRef], key_types: &[SqlType]) -> Result<Self> {
        if key_columns.len() != key_types.len() {
            return Err(AggError::Input(format!(
                "{} key columns but {} key types",
                key_columns.len(),
                key_types.len()
            )));
        }
        let rows = key_columns.first().map_or(0, |c| c.len());
        let mut columns = Vec::with_capacity(key_columns.len());
        for (index, (array, sql)) in key_columns.iter().zip(key_types).enumerate() {
            if array.len() != rows {
                return Err(AggError::Input(format!(
                    "key column {index} has {} rows, expected {rows}",
                    array.len()
                )));
            }
            columns.push(resolve(index, array, sql)?);
        }
        let arity = columns.len();
        let null_bits_bytes = (arity + 63 + 8) / 64 * 8;
        Ok(KeyRowEncoder {
            columns,
            null_bits_bytes,
            fixed_bytes: null_bits_bytes + 8 * arity,
            rows,
        })
    }

    /// Number of rows in the key columns.
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Replaces `out` with the `BinaryRowData` bytes of key row `row`.
    /// `row` must be below [`num_rows`](Self::num_rows).
    pub fn write_row(&self, row: usize, out: &mut Vec<u8>) {
        out.clear();
        out.resize(self.fixed_bytes, 0);
        for (pos, column) in self.columns.iter().enumerate() {
            let slot = self.null_bits_bytes + 8 * pos;
            let is_null = column.nulls.is_some_and(|n| n.is_null(row));
            if is_null {
                let bit = pos + 8;
                out[bit >> 3] |= 1 << (bit & 7);
                // Non-compact types still reserve their variable part.
                let reserve = match column.values {
                    KeyColumn::WideDecimal(_) => 16,
                    KeyColumn::WideTimestamp { .. } => 8,
                    _ => 0,
                };
                if reserve > 0 {
                    let cursor = out.len() as u64;
                    put_slot(out, slot, cursor << 32);
                    out.resize(out.len() + reserve, 0);
                }
                continue;
            }
            column.values.write_value(row, out, slot, 0, false);
        }
    }

    /// Appends `BinaryRowData.hashCode()` of every key row to `out`, using
    /// `scratch` as the row buffer. Keys without a variable-length part are
    /// hashed column by column without materialising rows.
    pub fn hash_rows(&self, scratch: &mut Vec<u8>, out: &mut Vec<i32>) {
        if self
            .columns
            .iter()
            .all(|c| c.values.fixed_slot(0).is_some())
        {
            self.hash_fixed_columnar(out);
            return;
        }
        out.reserve(self.rows);
        for row in 0..self.rows {
            self.write_row(row, scratch);
            out.push(hash_bytes_by_words(scratch));
        }
    }

    /// Murmur over the rows' words in row-byte order, one column at a time:
    /// first the null bit set words, then each column's two slot words.
    fn hash_fixed_columnar(&self, out: &mut Vec<i32>) {
        let start = out.len();
        let rows = self.rows;
        out.resize(start + rows, MURMUR_SEED);
        let hashes = &mut out[start..];
        for word in 0..self.null_bits_bytes / 4 {
            // Bits 32*word .. 32*word+32 of the null bit set; field i is bit i+8.
            let in_word: Vec<(usize, u32)> = self
                .columns
                .iter()
                .enumerate()
                .filter(|(i, c)| (i + 8) / 32 == word && c.nulls.is_some())
                .map(|(i, _)| (i, 1u32 << ((i + 8) % 32)))
                .collect();
            if in_word.is_empty() {
                let k = mix_k1(0);
                hashes.iter_mut().for_each(|h| *h = mix_h1(*h, k));
                continue;
            }
            for (row, h) in hashes.iter_mut().enumerate() {
                let mut w = 0u32;
                for &(i, bit) in &in_word {
                    if self.columns[i].nulls.is_some_and(|n| n.is_null(row)) {
                        w |= bit;
                    }
                }
                *h = mix_h1(*h, mix_k1(w as i32));
            }
        }
        for column in &self.columns {
            let mix_slot = |h: &mut i32, slot: u64| {
                *h = mix_h1(*h, mix_k1(slot as u32 as i32));
                *h = mix_h1(*h, mix_k1((slot >> 32) as u32 as i32));
            };
            match column.nulls {
                None => {
                    for (row, h) in hashes.iter_mut().enumerate() {
                        mix_slot(h, column.values.fixed_slot(row).unwrap_or(0));
                    }
                }
                Some(nulls) => {
                    for (row, h) in hashes.iter_mut().enumerate() {
                        let slot = if nulls.is_valid(row) {
                            column.values.fixed_slot(row).unwrap_or(0)
                        } else {
                            0
                        };
                        mix_slot(h, slot);
                    }
                }
            }
        }
        let len = self.fixed_bytes as i32;
        hashes.iter_mut().for_each(|h| *h = fmix32(*h ^ len));
    }
}

impl KeyColumn<'_> {
    /// The 8-byte slot of a non-null value of a type without a
    /// variable-length part; `None` for types that have one.
    #[inline(always)]
    fn fixed_slot(&self, row: usize) -> Option<u64> {
        Some(match self {
            KeyColumn::Byte(v) => v[row] as u8 as u64,
            KeyColumn::Short(v) => v[row] as u16 as u64,
            KeyColumn::Int(v) => v[row] as u32 as u64,
            KeyColumn::Long(v) => v[row] as u64,
            KeyColumn::Float(v) => v[row].to_bits() as u64,
            KeyColumn::Double(v) => v[row].to_bits(),
            KeyColumn::CompactDecimal(v) => v[row] as i64 as u64,
            KeyColumn::Bool(v) => v.value(row) as u64,
            KeyColumn::WideDecimal(_)
            | KeyColumn::WideTimestamp { .. }
            | KeyColumn::Utf8(_)
            | KeyColumn::Array(_) => return None,
        })
    }

    /// The width of one element of this type in a `BinaryArrayData`
    /// (`BinaryArrayData.calculateFixLengthPartSize`).
    pub(super) fn element_width(&self) -> usize {
        match self {
            KeyColumn::Byte(_) | KeyColumn::Bool(_) => 1,
            KeyColumn::Short(_) => 2,
            KeyColumn::Int(_) | KeyColumn::Float(_) => 4,
            _ => 8,
        }
    }

    /// Writes non-null value `row` as Flink's writers do: its fixed part at
    /// `at` in `out` (zeroed, [`element_width`](Self::element_width) bytes
    /// or an 8-byte row slot), its variable-length part appended to `out`
    /// padded to 8 bytes, with the offset counted from `base` (the start of
    /// the row or array). `canonical_nan` is BinaryArrayWriter's rule: a
    /// NaN element is written as Java's `Float.NaN` / `Double.NaN`
    /// (BinaryRowWriter writes a field's bits as they are).
    pub(super) fn write_value(
        &self,
        row: usize,
        out: &mut Vec<u8>,
        at: usize,
        base: usize,
        canonical_nan: bool,
    ) {
        let offset = |cursor: usize| ((cursor - base) as u64) << 32;
        match self {
            KeyColumn::Byte(v) => out[at] = v[row] as u8,
            KeyColumn::Short(v) => out[at..at + 2].copy_from_slice(&v[row].to_le_bytes()),
            KeyColumn::Int(v) => out[at..at + 4].copy_from_slice(&v[row].to_le_bytes()),
            KeyColumn::Long(v) => put_slot(out, at, v[row] as u64),
            KeyColumn::Float(v) => {
                let value = if canonical_nan && v[row].is_nan() {
                    f32::NAN
                } else {
                    v[row]
                };
                out[at..at + 4].copy_from_slice(&value.to_bits().to_le_bytes())
            }
            KeyColumn::Double(v) => {
                let value = if canonical_nan && v[row].is_nan() {
                    f64::NAN
                } else {
                    v[row]
                };
                put_slot(out, at, value.to_bits())
            }
            KeyColumn::CompactDecimal(v) => put_slot(out, at, v[row] as i64 as u64),
            KeyColumn::WideDecimal(v) => {
                let cursor = out.len();
                let (bytes, len) = unscaled_bytes(v[row]);
                out.extend_from_slice(&bytes[16 - len..]);
                out.resize(cursor + 16, 0);
                put_slot(out, at, offset(cursor) | len as u64);
            }
            KeyColumn::WideTimestamp { millis, nanos } => {
                let cursor = out.len();
                out.extend_from_slice(&millis[row].to_le_bytes());
                let nano = nanos[row] as u32 as u64;
                put_slot(out, at, offset(cursor) | nano);
            }
            KeyColumn::Bool(v) => out[at] = v.value(row) as u8,
            KeyColumn::Utf8(v) => {
                let bytes = v.value(row).as_bytes();
                let len = bytes.len();
                if len <= MAX_INLINE_BYTES {
                    out[at..at + len].copy_from_slice(bytes);
                    out[at + 7] = 0x80 | len as u8;
                } else {
                    let cursor = out.len();
                    out.extend_from_slice(bytes);
                    out.resize(cursor + len.div_ceil(8) * 8, 0);
                    put_slot(out, at, offset(cursor) | len as u64);
                }
            }
            KeyColumn::Array(array) => {
                let cursor = out.len();
                let size = array.write(row, out);
                out.resize(cursor + size.div_ceil(8) * 8, 0);
                put_slot(out, at, offset(cursor) | size as u64);
            }
        }
    }
}

#[inline]
fn put_slot(out: &mut [u8], slot: usize, value: u64) {
    out[slot..slot + 8].copy_from_slice(&value.to_le_bytes());
}

/// Flink's `BinaryRowData.hashCode()` of each row's grouping key, replacing
/// the contents of `out`. Key columns use the Arrow encodings of
/// `specs/types.toml`; a column whose Arrow type does not fit its SQL type
/// is an [`AggError::Input`].
pub fn key_hashes(
    key_columns: &[ArrayRef],
    key_types: &[SqlType],
    out: &mut Vec<i32>,
) -> Result<()> {
    let encoder = KeyRowEncoder::new(key_columns, key_types)?;
    out.clear();
    let mut scratch = Vec::with_capacity(encoder.fixed_bytes + 64);
    encoder.hash_rows(&mut scratch, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Decimal128Array, Int32Array, Int64Array};
    use std::sync::Arc;

    fn row_bytes(columns: &[ArrayRef], types: &[SqlType], row: usize) -> Vec<u8> {
        let enc = KeyRowEncoder::new(columns, types).unwrap();
        let mut out = Vec::new();
        enc.write_row(row, &mut out);
        out
    }

    #[test]
    fn string_hashes_are_binary_string_data_hash_codes() {
        // BinaryStringData.fromString(s).hashCode(), Flink 2.2.1 (JDK 17).
        for (text, hash) in [
            ("", 142593372),
            ("a", 1485273170),
            ("ab", -97053317),
            ("abc", 1322437556),
            ("abcd", -396302900),
            ("abcde", 814637928),
            ("é", 2119106806),
            ("日本語", -1143049834),
            ("xxxxxxxxx", 1397998461),
            ("héllo wörld", -281075962),
            ("\u{1F600}", 1877935379),
        ] {
            assert_eq!(hash_bytes(text.as_bytes()), hash, "{text:?}");
        }
    }

    #[test]
    fn int_key_layout() {
        let col: ArrayRef = Arc::new(Int32Array::from(vec![Some(0x01020304), None]));
        let bytes = row_bytes(std::slice::from_ref(&col), &[SqlType::of("INT")], 0);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[8..12], &[4, 3, 2, 1]);
        assert!(bytes[..8].iter().all(|b| *b == 0));
        let null = row_bytes(&[col], &[SqlType::of("INT")], 1);
        assert_eq!(null[1], 1, "null bit of field 0 is bit 8");
        assert!(null[8..].iter().all(|b| *b == 0));
    }

    #[test]
    fn strings_inline_and_variable() {
        let col: ArrayRef = Arc::new(StringArray::from(vec!["abc", "abcdefgh", ""]));
        let t = [SqlType::of("VARCHAR(100)")];
        let inline = row_bytes(std::slice::from_ref(&col), &t, 0);
        assert_eq!(&inline[8..16], &[b'a', b'b', b'c', 0, 0, 0, 0, 0x83]);
        let var = row_bytes(std::slice::from_ref(&col), &t, 1);
        assert_eq!(var.len(), 24);
        assert_eq!(&var[8..16], &[8, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(&var[16..24], b"abcdefgh");
        let empty = row_bytes(&[col], &t, 2);
        assert_eq!(&empty[8..16], &[0, 0, 0, 0, 0, 0, 0, 0x80]);
    }

    #[test]
    fn wide_decimal_bytes_are_minimal_twos_complement() {
        assert_eq!(unscaled_bytes(0).1, 1);
        assert_eq!(unscaled_bytes(127).1, 1);
        assert_eq!(unscaled_bytes(128).1, 2);
        assert_eq!(unscaled_bytes(-128).1, 1);
        assert_eq!(unscaled_bytes(-129).1, 2);
        let (b, n) = unscaled_bytes(-1);
        assert_eq!(&b[16 - n..], &[0xff]);
        let col: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(-129), None])
                .with_precision_and_scale(20, 2)
                .unwrap(),
        );
        let t = [SqlType::of("DECIMAL(20, 2)")];
        let bytes = row_bytes(std::slice::from_ref(&col), &t, 0);
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[8..16], &[2, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(&bytes[16..18], &[0xff, 0x7f]);
        let null = row_bytes(&[col], &t, 1);
        assert_eq!(null.len(), 32);
        assert_eq!(&null[8..16], &[0, 0, 0, 0, 16, 0, 0, 0]);
    }

    #[test]
    fn rejects_values_flink_cannot_hold() {
        let col: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(i128::from(i64::MAX) + 1), None])
                .with_precision_and_scale(18, 0)
                .unwrap(),
        );
        let t = [SqlType::of("DECIMAL(18, 0)")];
        let mut out = Vec::new();
        assert!(key_hashes(&[col], &t, &mut out).is_err());
        let ok: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(-5), None])
                .with_precision_and_scale(18, 0)
                .unwrap(),
        );
        key_hashes(&[ok], &t, &mut out).unwrap();
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn wide_timestamp_layout_and_nano_range() {
        use arrow_array::StructArray;
        use arrow_schema::Field;
        let make = |nanos: Vec<i32>| -> ArrayRef {
            Arc::new(StructArray::new(
                vec![
                    Arc::new(Field::new("millisecond", DataType::Int64, true)),
                    Arc::new(Field::new("nano_of_millisecond", DataType::Int32, true)),
                ]
                .into(),
                vec![
                    Arc::new(Int64Array::from(vec![-2, 5])) as ArrayRef,
                    Arc::new(Int32Array::from(nanos)) as ArrayRef,
                ],
                Some(vec![true, false].into()),
            ))
        };
        let t = [SqlType::of("TIMESTAMP(9)")];
        let col = make(vec![7, -1]);
        let bytes = row_bytes(std::slice::from_ref(&col), &t, 0);
        assert_eq!(&bytes[8..16], &[7, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(&bytes[16..24], &(-2i64).to_le_bytes());
        // The invalid nano sits under a NULL, so it is not checked.
        let null = row_bytes(&[col], &t, 1);
        assert_eq!(&null[8..16], &[0, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(null.len(), 24);
        let mut out = Vec::new();
        assert!(key_hashes(&[make(vec![1_000_000, 0])], &t, &mut out).is_err());
    }

    #[test]
    fn columnar_and_row_paths_agree() {
        use arrow_array::{BooleanArray, Float64Array, Int8Array};
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int8Array::from(vec![Some(-1), None, Some(3), Some(0)])),
            Arc::new(Int64Array::from(vec![
                Some(i64::MIN),
                Some(7),
                None,
                Some(0),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(-0.0),
                Some(1.5),
                Some(2.0),
                None,
            ])),
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
            ])),
        ];
        let types = [
            SqlType::of("TINYINT"),
            SqlType::of("BIGINT"),
            SqlType::of("DOUBLE"),
            SqlType::of("BOOLEAN"),
        ];
        let enc = KeyRowEncoder::new(&cols, &types).unwrap();
        let mut columnar = Vec::new();
        enc.hash_rows(&mut Vec::new(), &mut columnar);
        let mut buf = Vec::new();
        let by_rows: Vec<i32> = (0..4)
            .map(|row| {
                enc.write_row(row, &mut buf);
                hash_bytes_by_words(&buf)
            })
            .collect();
        assert_eq!(columnar, by_rows);
    }

    #[test]
    fn rejects_mismatched_types() {
        let col: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        let mut out = Vec::new();
        let err = key_hashes(&[col], &[SqlType::of("INT")], &mut out).unwrap_err();
        assert!(err.to_string().contains("declared INT"), "{err}");
    }

    #[test]
    fn murmur_matches_known_flink_value() {
        // Zero-length input: fmix32(42 ^ 0).
        assert_eq!(hash_bytes_by_words(&[]), fmix32(42));
    }
}
