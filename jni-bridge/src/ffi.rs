//! Batches across the Arrow C Data Interface: import a Java-exported
//! `VectorSchemaRoot` (a struct array) as a RecordBatch without copying,
//! export an output RecordBatch into Java-allocated structs.

use std::sync::Arc;

use arrow_array::ffi::from_ffi;
use arrow_array::{Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Schema};

use crate::error::{BridgeError, BridgeResult};

fn checked<T>(address: i64, what: &str) -> BridgeResult<*mut T> {
    let ptr = address as usize as *mut T;
    if ptr.is_null() {
        return Err(BridgeError::Ffi(format!("{what} address is 0")));
    }
    if !ptr.is_aligned() {
        return Err(BridgeError::Ffi(format!(
            "{what} address {address:#x} is not aligned"
        )));
    }
    Ok(ptr)
}

/// Takes over the batch exported at `array_address`/`schema_address` (an
/// `ArrowArray` and `ArrowSchema` of a struct, as Arrow Java's
/// `Data.exportVectorSchemaRoot` writes them). The structs are left
/// released; the batch's buffers stay Java's and are released through the
/// exporter's callback when the last column is dropped.
///
/// # Safety
/// Non-zero addresses must point to C Data Interface structs that are
/// either released or hold a valid export.
pub unsafe fn import_batch(array_address: i64, schema_address: i64) -> BridgeResult<RecordBatch> {
    let array_ptr = checked::<FFI_ArrowArray>(array_address, "input ArrowArray")?;
    let schema_ptr = checked::<FFI_ArrowSchema>(schema_address, "input ArrowSchema")?;
    if (*array_ptr).is_released() {
        return Err(BridgeError::Ffi(
            "the input ArrowArray is released (nothing exported into it)".into(),
        ));
    }
    // Move both out first, so each is released exactly once whatever fails next.
    let array = FFI_ArrowArray::from_raw(array_ptr);
    let schema = FFI_ArrowSchema::from_raw(schema_ptr);
    let data = from_ffi(array, &schema)?;
    data.validate_full()?;
    let DataType::Struct(_) = data.data_type() else {
        return Err(BridgeError::Ffi(format!(
            "the input must be a struct (an exported VectorSchemaRoot), not {}",
            data.data_type()
        )));
    };
    let rows = data.len();
    let (fields, columns, nulls) = StructArray::from(data).into_parts();
    if nulls.is_some_and(|n| n.null_count() > 0) {
        return Err(BridgeError::Ffi("the input struct has null rows".into()));
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &options,
    )?)
}

/// Exports `batch` as a struct array into the structs at
/// `array_address`/`schema_address` (allocated by Java, e.g. with
/// `ArrowArray.allocateNew`); whatever they held before is released. The
/// importer owns the export and releases it.
///
/// # Safety
/// The addresses must point to writable C Data Interface structs that are
/// released or hold a valid export.
pub unsafe fn export_batch(
    batch: RecordBatch,
    array_address: i64,
    schema_address: i64,
) -> BridgeResult<()> {
    let array_ptr = checked::<FFI_ArrowArray>(array_address, "output ArrowArray")?;
    let schema_ptr = checked::<FFI_ArrowSchema>(schema_address, "output ArrowSchema")?;
    let data = StructArray::from(batch).into_data();
    let schema = FFI_ArrowSchema::try_from(data.data_type())?;
    let array = FFI_ArrowArray::new(&data);
    drop(std::ptr::replace(schema_ptr, schema));
    drop(std::ptr::replace(array_ptr, array));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int8Array, StringArray};
    use arrow_schema::Field;

    fn sample() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("$row_kind", DataType::Int8, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("ccc")])),
                Arc::new(Int8Array::from(vec![0, 0, 0])),
            ],
        )
        .unwrap()
    }

    fn addr<T>(b: &mut Box<T>) -> i64 {
        b.as_mut() as *mut T as usize as i64
    }

    #[test]
    fn export_then_import_round_trips() {
        let mut array = Box::new(FFI_ArrowArray::empty());
        let mut schema = Box::new(FFI_ArrowSchema::empty());
        let batch = sample();
        unsafe { export_batch(batch.clone(), addr(&mut array), addr(&mut schema)).unwrap() };
        assert!(!array.is_released());
        let back = unsafe { import_batch(addr(&mut array), addr(&mut schema)).unwrap() };
        assert!(array.is_released(), "import takes the export over");
        assert_eq!(back.columns(), batch.columns());
        assert_eq!(back.schema().field(1).name(), "s");
    }

    #[test]
    fn export_over_an_unreleased_struct_releases_it() {
        let mut array = Box::new(FFI_ArrowArray::empty());
        let mut schema = Box::new(FFI_ArrowSchema::empty());
        unsafe { export_batch(sample(), addr(&mut array), addr(&mut schema)).unwrap() };
        unsafe { export_batch(sample(), addr(&mut array), addr(&mut schema)).unwrap() };
        let back = unsafe { import_batch(addr(&mut array), addr(&mut schema)).unwrap() };
        assert_eq!(back.num_rows(), 3);
    }

    #[test]
    fn bad_addresses_and_released_input_are_errors() {
        let err = unsafe { import_batch(0, 0) }.unwrap_err().to_string();
        assert!(err.contains("address is 0"), "{err}");
        let mut array = Box::new(FFI_ArrowArray::empty());
        let mut schema = Box::new(FFI_ArrowSchema::empty());
        let err = unsafe { import_batch(addr(&mut array), addr(&mut schema)) }
            .unwrap_err()
            .to_string();
        assert!(err.contains("released"), "{err}");
        let err = unsafe { import_batch(addr(&mut array) + 1, addr(&mut schema)) }
            .unwrap_err()
            .to_string();
        assert!(err.contains("not aligned"), "{err}");
    }

    #[test]
    fn a_non_struct_input_is_an_error() {
        let data = Int32Array::from(vec![1, 2]).into_data();
        let mut array = Box::new(FFI_ArrowArray::new(&data));
        let mut schema = Box::new(FFI_ArrowSchema::try_from(data.data_type()).unwrap());
        let err = unsafe { import_batch(addr(&mut array), addr(&mut schema)) }
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be a struct"), "{err}");
    }
}
