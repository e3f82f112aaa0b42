//! The native methods of a GROUP BY aggregate whose state lives in Flink's
//! keyed state backend in Flink's own layout (`NativeAggregate`'s
//! `bindFlinkState`, `stateChanges`, `stateChangesWritten`, `loadState`):
//! the Java operator writes the changed groups back at each checkpoint and
//! loads the backend's groups when it restores.

use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jlong, jstring, JNI_FALSE};
use jni::JNIEnv;

use crate::boundary::entry;
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
