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

/// `address` as a pointer to a `T`, refused when it is 0 or not aligned for
/// `T`. That is all Rust can check of an address Java passes; that it points
/// to a live `T` is the caller's obligation (see the `# Safety` sections).
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
/// 0 and misaligned addresses are refused with an error; otherwise the
/// caller guarantees, for the duration of the call:
/// - `array_address` points to a readable and writable `ArrowArray` (80
///   bytes) and `schema_address` to a distinct readable and writable
///   `ArrowSchema` (72 bytes), which nothing else reads or writes meanwhile;
/// - the `ArrowArray` is either released (its `release` is NULL, as Arrow
///   Java's `ArrowArray.allocateNew` and a completed import leave it) or
///   holds a live export that agrees with the C Data Interface; in the
///   latter case the `ArrowSchema` holds the matching live export of its
///   type (as `Data.exportVectorSchemaRoot` writes the pair), since the
///   schema's own release flag cannot be read through arrow-rs's API;
/// - the exporter keeps the exported buffers valid until the release
///   callbacks it installed are called.
pub unsafe fn import_batch(array_address: i64, schema_address: i64) -> BridgeResult<RecordBatch> {
    let array_ptr = checked::<FFI_ArrowArray>(array_address, "input ArrowArray")?;
    let schema_ptr = checked::<FFI_ArrowSchema>(schema_address, "input ArrowSchema")?;
    // SAFETY: `array_ptr` is non-null and aligned (`checked`) and, by this
    // function's contract, points to an `ArrowArray` nothing else touches
    // during the call. Every field of `FFI_ArrowArray` is an integer, a raw
    // pointer or the nullable `release` callback, so the read is of a valid
    // value; only `release` is looked at.
    let released = unsafe { (*array_ptr).is_released() };
    if released {
        return Err(BridgeError::Ffi(
            "the input ArrowArray is released (nothing exported into it)".into(),
        ));
    }
    // Move both out first, so each is released exactly once whatever fails next.
    // SAFETY: as above, `array_ptr` is non-null, aligned, valid for reads
    // and writes and points to an initialized `FFI_ArrowArray`, which is
    // what `from_raw` requires. It moves the live export out and leaves an
    // empty (released) struct behind, so Java's later `release()` on it is a
    // no-op and the export is released once, by the Rust owner.
    let array = unsafe { FFI_ArrowArray::from_raw(array_ptr) };
    // SAFETY: `schema_ptr` is non-null and aligned (`checked`) and, by this
    // function's contract, points to a distinct, initialized `ArrowSchema`
    // valid for reads and writes; `from_raw` moves it out and leaves it
    // released, as for the array.
    let schema = unsafe { FFI_ArrowSchema::from_raw(schema_ptr) };
    // SAFETY: `array` holds a live export (checked not released above) and
    // `schema` its matching type, both agreeing with the C Data Interface
    // per this function's contract. `from_ffi` takes `array` by value and
    // keeps it alive behind the imported buffers, whose last drop calls the
    // exporter's release callback. It trusts the export's lengths (and, for
    // strings, the last offset, to size the data buffer); `validate_full`
    // below then checks the offsets, UTF-8 and child lengths against the
    // type before the runtime reads a value.
    let data = unsafe { from_ffi(array, &schema) }?;
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
/// 0 and misaligned addresses are refused with an error (nothing is
/// written then); otherwise the caller guarantees, for the duration of the
/// call, that `array_address` points to a readable and writable
/// `ArrowArray` and `schema_address` to a distinct readable and writable
/// `ArrowSchema`, which nothing else reads or writes meanwhile, and that
/// each is either released (`release` NULL, as `allocateNew` leaves it) or
/// holds a live export whose release callback may be called here.
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
    // SAFETY: `schema_ptr` is non-null and aligned (`checked`) and, by this
    // function's contract, valid for reads and writes and exclusively ours
    // during the call. The old value read out is a valid `FFI_ArrowSchema`
    // (integers, raw pointers and a nullable callback); dropping it calls its
    // release callback only if it still holds an export, which the contract
    // allows, and does nothing when released.
    drop(unsafe { std::ptr::replace(schema_ptr, schema) });
    // SAFETY: as for the schema: `array_ptr` is non-null, aligned, valid for
    // reads and writes and points to a released or live `ArrowArray`, which
    // the drop releases at most once; the new export now belongs to the
    // importer, which releases it.
    drop(unsafe { std::ptr::replace(array_ptr, array) });
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

    /// The address of a boxed struct, as Java passes `memoryAddress()`.
    /// Each test's structs are separate boxes living to the end of the test,
    /// so every address passed below is valid, aligned and distinct.
    fn addr<T>(b: &mut Box<T>) -> i64 {
        b.as_mut() as *mut T as usize as i64
    }

    #[test]
    fn export_then_import_round_trips() {
        let mut array = Box::new(FFI_ArrowArray::empty());
        let mut schema = Box::new(FFI_ArrowSchema::empty());
        let batch = sample();
        // SAFETY: two distinct live boxes (see `addr`), both released (`empty`).
        unsafe { export_batch(batch.clone(), addr(&mut array), addr(&mut schema)).unwrap() };
        assert!(!array.is_released());
        // SAFETY: the same boxes, now holding the matching array and schema
        // exports just written by `export_batch`.
        let back = unsafe { import_batch(addr(&mut array), addr(&mut schema)).unwrap() };
        assert!(array.is_released(), "import takes the export over");
        assert_eq!(back.columns(), batch.columns());
        assert_eq!(back.schema().field(1).name(), "s");
    }

    #[test]
    fn export_over_an_unreleased_struct_releases_it() {
        let mut array = Box::new(FFI_ArrowArray::empty());
        let mut schema = Box::new(FFI_ArrowSchema::empty());
        // SAFETY: two distinct live boxes (see `addr`), both released (`empty`).
        unsafe { export_batch(sample(), addr(&mut array), addr(&mut schema)).unwrap() };
        // SAFETY: the same boxes, holding live exports of Rust's own
        // exporter, whose release callbacks the overwrite may call.
        unsafe { export_batch(sample(), addr(&mut array), addr(&mut schema)).unwrap() };
        // SAFETY: the boxes hold the matching exports of the second call.
        let back = unsafe { import_batch(addr(&mut array), addr(&mut schema)).unwrap() };
        assert_eq!(back.num_rows(), 3);
    }

    #[test]
    fn bad_addresses_and_released_input_are_errors() {
        // SAFETY: 0 is refused before anything is read.
        let err = unsafe { import_batch(0, 0) }.unwrap_err().to_string();
        assert!(err.contains("address is 0"), "{err}");
        let mut array = Box::new(FFI_ArrowArray::empty());
        let mut schema = Box::new(FFI_ArrowSchema::empty());
        // SAFETY: two distinct live boxes (see `addr`), both released, so only
        // the array's `release` field is read.
        let err = unsafe { import_batch(addr(&mut array), addr(&mut schema)) }
            .unwrap_err()
            .to_string();
        assert!(err.contains("released"), "{err}");
        // SAFETY: the misaligned array address is refused before any read;
        // the schema address is a live box.
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
        // SAFETY: two distinct live boxes holding a matching array and
        // schema export of arrow-rs (an Int32 array, refused after import).
        let err = unsafe { import_batch(addr(&mut array), addr(&mut schema)) }
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be a struct"), "{err}");
    }
}
