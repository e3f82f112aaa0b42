//! The native methods of a GROUP BY aggregate whose state lives in Flink's
//! keyed state backend in Flink's own layout (`NativeAggregate`'s
//! `bindFlinkState`, `stateChanges`, `stateChangesWritten`, `loadState`):
//! the Java operator writes the changed groups back at each checkpoint and
//! loads the groups a batch needs from the backend (`probe`, `loadState`,
//! `processPending`), and empties the native cache into the backend when
//! the budget is nearly used (`shouldEvict`, `evictAll`).

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jint, jlong, jstring, JNI_FALSE};
use jni::JNIEnv;

use crate::boundary::entry;
use crate::error::BridgeError;
use crate::{aggregate, read_string, to_jboolean};

/// `static native String bindFlinkState(long handle, String accTypesJson)`:
/// null when the operator's state is bound to Flink's accumulator layout,
/// else the reason it keeps aggforge's snapshot format.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_bindFlinkState<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    acc_types_json: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let json = read_string(env, &acc_types_json, "the accumulator types")?;
        match aggregate::bind_flink_state(handle as u64, &json)? {
            None => Ok(std::ptr::null_mut()),
            Some(reason) => Ok(env.new_string(reason)?.into_raw()),
        }
    })
}

/// `static native boolean stateChanges(long handle, long outArray, long
/// outSchema)`: the groups changed since the last write-back, as one batch
/// in the output structs; false when none changed.
///
/// # Safety
/// The two addresses must meet `aggregate::state_changes`'s contract, which
/// Java's `ArrowAggregate` meets with its output structs as for `flush`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_stateChanges<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        // SAFETY: this function's contract is `aggregate::state_changes`'s,
        // for the same two addresses, passed on unchanged.
        let changed = unsafe { aggregate::state_changes(handle as u64, out_array, out_schema)? };
        Ok(to_jboolean(changed))
    })
}

/// `static native void stateChangesWritten(long handle)`: the changes the
/// last `stateChanges` returned are in the state backend.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_stateChangesWritten<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    entry(&mut env, (), |_| {
        aggregate::state_changes_written(handle as u64)
    })
}

/// `static native void backendRestored(long handle)`: Flink restored groups
/// into the state backend, which batches must read when not cached.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_backendRestored<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    entry(&mut env, (), |_| aggregate::backend_restored(handle as u64))
}

/// `static native void loadState(long handle, long inArray, long
/// inSchema)`: accumulator rows read from the state backend become state.
///
/// # Safety
/// The two addresses must meet `aggregate::load_state`'s contract, which
/// Java's `ArrowAggregate` meets as for `process` (its input structs,
/// filled by `Data.exportVectorSchemaRoot` right before the call).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_loadState<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    in_array: jlong,
    in_schema: jlong,
) {
    entry(&mut env, (), |_| {
        // SAFETY: this function's contract is `aggregate::load_state`'s, for
        // the same two addresses, passed on unchanged.
        unsafe { aggregate::load_state(handle as u64, in_array, in_schema) }
    })
}

/// `static native boolean probe(long handle, long inArray, long inSchema,
/// long outArray, long outSchema)`: keeps the batch for `processPending`
/// and writes the keys of the groups it touches that the operator does not
/// hold to the output structs; false when it holds them all.
///
/// # Safety
/// The four addresses must meet `aggregate::probe`'s contract, which Java's
/// `ArrowAggregate` meets as for `process`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_probe<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    in_array: jlong,
    in_schema: jlong,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        // SAFETY: this function's contract is `aggregate::probe`'s, for the
        // same four addresses, passed on unchanged.
        let missing =
            unsafe { aggregate::probe(handle as u64, in_array, in_schema, out_array, out_schema)? };
        Ok(to_jboolean(missing))
    })
}

/// `static native boolean probeMessage(long handle, byte[] message, int
/// fromRow, int toRow, long outArray, long outSchema)`: `probe` for rows
/// `fromRow..toRow` of a columnar-exchange message.
///
/// # Safety
/// The two addresses must meet `aggregate::probe_message`'s contract, which
/// Java's `ArrowAggregate` meets with its output structs as for `process`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_probeMessage<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    message: JByteArray<'l>,
    from_row: jint,
    to_row: jint,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |env| {
        if message.is_null() {
            return Err(BridgeError::Ffi("the message is null".into()));
        }
        let bytes = env.convert_byte_array(&message)?;
        let row = |n: jint| {
            usize::try_from(n).map_err(|_| BridgeError::Ffi(format!("row {n} is negative")))
        };
        // SAFETY: this function's contract is `aggregate::probe_message`'s
        // for the same two addresses, passed on unchanged.
        let missing = unsafe {
            aggregate::probe_message(
                handle as u64,
                &bytes,
                row(from_row)?,
                row(to_row)?,
                out_array,
                out_schema,
            )?
        };
        Ok(to_jboolean(missing))
    })
}

/// `static native boolean processPending(long handle, long outArray, long
/// outSchema)`: folds the batch `probe` kept, emitting like `process`.
///
/// # Safety
/// The two addresses must meet `aggregate::process_pending`'s contract,
/// which Java's `ArrowAggregate` meets as for `process`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_processPending<
    'l,
>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        // SAFETY: this function's contract is `aggregate::process_pending`'s,
        // for the same two addresses, passed on unchanged.
        let emitted = unsafe { aggregate::process_pending(handle as u64, out_array, out_schema)? };
        Ok(to_jboolean(emitted))
    })
}

/// `static native boolean shouldEvict(long handle, int batchRows)`: whether
/// the operator should be emptied into the state backend now.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_shouldEvict<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    batch_rows: jint,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        let rows = usize::try_from(batch_rows)
            .map_err(|_| BridgeError::Ffi(format!("batch rows {batch_rows} is negative")))?;
        Ok(to_jboolean(aggregate::should_evict(handle as u64, rows)?))
    })
}

/// `static native boolean evictAll(long handle, long outArray, long
/// outSchema)`: empties the operator, writing every changed group's change
/// row to the output structs; false when none changed.
///
/// # Safety
/// The two addresses must meet `aggregate::evict_all`'s contract, which
/// Java's `ArrowAggregate` meets with its output structs as for `flush`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_evictAll<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        // SAFETY: this function's contract is `aggregate::evict_all`'s, for
        // the same two addresses, passed on unchanged.
        let changed = unsafe { aggregate::evict_all(handle as u64, out_array, out_schema)? };
        Ok(to_jboolean(changed))
    })
}
