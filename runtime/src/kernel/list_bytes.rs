//! The `list` binding: an `ARRAY<T>` argument, result or state column.
//!
//! Functions that never look inside a value (COUNT, FIRST_VALUE,
//! LAST_VALUE) only count, store, compare and write ARRAY values back, so a
//! value is carried as the `arrow-row` bytes of its list: one encoding of
//! the whole column per batch ([`Binding::prepare`]), borrowed bytes per
//! row, owned bytes in state, and one decoding when a column is built.
//! Equal lists have equal bytes: elements compare by value, floats by
//! their bits (so -0.0 and 0.0 differ and every NaN bit pattern is its
//! own value, where Flink's BinaryArrayData, which canonicalises NaN,
//! sees one NaN).

use std::sync::Arc;

use arrow_array::{new_null_array, Array, ArrayRef, BinaryArray};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;

use super::bind::Binding;
use crate::error::{AggError, Result};
use crate::types::SqlType;

/// The Arrow type of an `ARRAY<T>` argument's columns.
pub fn list_type(arg: &SqlType) -> Result<DataType> {
    match arg.data_type() {
        Some(list @ DataType::List(_)) => Ok(list),
        _ => Err(AggError::Plan(format!(
            "expected an ARRAY argument whose element type a type row covers, got {arg}"
        ))),
    }
}

/// The converter between lists of `data_type` and their row bytes.
fn converter(data_type: &DataType) -> Result<RowConverter> {
    Ok(RowConverter::new(vec![SortField::new(data_type.clone())])?)
}

/// `List` column, each value carried as its `arrow-row` bytes; state holds
/// owned bytes.
#[derive(Debug)]
pub struct ListBytes;

impl Binding for ListBytes {
    type Owned = Vec<u8>;
    type Ref<'a> = &'a [u8];
    type Reader<'a> = &'a BinaryArray;

    /// Encodes a `List` column's values as row bytes (a `Binary` column of
    /// the same length; NULL rows stay NULL); a `Binary` column is taken
    /// as already encoded.
    fn prepare(column: &ArrayRef) -> Result<ArrayRef> {
        match column.data_type() {
            DataType::Binary => Ok(column.clone()),
            list @ DataType::List(_) => {
                let rows = converter(list)?.convert_columns(std::slice::from_ref(column))?;
                let bytes = rows.try_into_binary()?;
                let (offsets, values, _) = bytes.into_parts();
                let nulls = column.logical_nulls();
                Ok(Arc::new(BinaryArray::try_new(offsets, values, nulls)?))
            }
            other => Err(AggError::Input(format!(
                "expected a List column for an ARRAY value, got {other}"
            ))),
        }
    }
    fn bind<'a>(column: &'a ArrayRef, name: &str) -> Result<&'a BinaryArray> {
        column
            .as_any()
            .downcast_ref::<BinaryArray>()
            .ok_or_else(|| {
                AggError::Input(format!(
                    "{name}: an ARRAY column must be prepared (encoded) before it is bound, got {}",
                    column.data_type()
                ))
            })
    }
    #[inline(always)]
    fn get<'a>(reader: &Self::Reader<'a>, i: usize) -> Self::Ref<'a> {
        reader.value(i)
    }
    #[inline(always)]
    fn rows(reader: &Self::Reader<'_>) -> usize {
        reader.len()
    }
    super::bind::owned_bytes_state!();
    /// Decodes the valid values' row bytes into a `List` column of
    /// `data_type` (NULL where a value is not valid).
    fn build(values: Vec<Vec<u8>>, valid: Vec<bool>, data_type: &DataType) -> Result<ArrayRef> {
        let converter = converter(data_type)?;
        let null = converter.convert_columns(&[new_null_array(data_type, 1)])?;
        let parser = converter.parser();
        let rows =
            values.iter().zip(&valid).map(
                |(bytes, &ok)| {
                    if ok {
                        parser.parse(bytes)
                    } else {
                        null.row(0)
                    }
                },
            );
        let mut columns = converter.convert_rows(rows)?;
        Ok(columns.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::builder::{Float64Builder, ListBuilder};
    use arrow_array::cast::AsArray;

    use super::*;

    fn doubles(lists: &[Option<Vec<Option<f64>>>]) -> ArrayRef {
        let mut builder = ListBuilder::new(Float64Builder::new());
        for list in lists {
            match list {
                Some(items) => {
                    for item in items {
                        builder.values().append_option(*item);
                    }
                    builder.append(true);
                }
                None => builder.append(false),
            }
        }
        Arc::new(builder.finish())
    }

    #[test]
    fn values_round_trip_through_row_bytes() {
        let column = doubles(&[
            Some(vec![Some(1.5), None]),
            None,
            Some(vec![]),
            Some(vec![Some(-0.0), Some(f64::NAN)]),
        ]);
        let prepared = ListBytes::prepare(&column).unwrap();
        assert_eq!(prepared.null_count(), 1);
        let reader = ListBytes::bind(&prepared, "t").unwrap();
        let values: Vec<Vec<u8>> = (0..4)
            .map(|i| ListBytes::get(&reader, i).to_vec())
            .collect();
        let valid = vec![true, false, true, true];
        let built = ListBytes::build(values, valid, column.data_type()).unwrap();
        let list = built.as_list::<i32>();
        assert!(list.is_null(1));
        assert_eq!(list.value(2).len(), 0);
        let first = list.value(0);
        assert_eq!(
            first
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(0),
            1.5
        );
        assert!(first.is_null(1));
        let last = list.value(3);
        let last = last.as_primitive::<arrow_array::types::Float64Type>();
        assert!(last.value(0).is_sign_negative() && last.value(1).is_nan());
    }

    #[test]
    fn equal_lists_have_equal_bytes_and_signed_zeros_differ() {
        let column = doubles(&[
            Some(vec![Some(1.0), None]),
            Some(vec![Some(1.0), None]),
            Some(vec![Some(0.0)]),
            Some(vec![Some(-0.0)]),
            Some(vec![Some(1.0)]),
        ]);
        let prepared = ListBytes::prepare(&column).unwrap();
        let reader = ListBytes::bind(&prepared, "t").unwrap();
        let get = |i| ListBytes::get(&reader, i);
        assert_eq!(get(0), get(1));
        assert_ne!(get(2), get(3));
        assert_ne!(get(0), get(4));
    }

    #[test]
    fn an_unprepared_list_is_refused_when_bound() {
        let column = doubles(&[Some(vec![Some(1.0)])]);
        let err = ListBytes::bind(&column, "call").unwrap_err().to_string();
        assert!(err.contains("must be prepared"), "{err}");
    }
}
