//! JNI bridge between Apache Flink and the aggforge runtime.
//!
//! Java class `dev.aggforge.flink.nativelib.NativeAggregate` declares the
//! native methods below. Each goes through [`boundary::entry`], which
//! catches panics and turns every error into an
//! `AggforgeNativeException` carrying the native message. Operators live
//! in a [`registry::Registry`] behind generation-checked handles. Batches
//! cross as Arrow C Data Interface structs that Java allocates ([`ffi`]).

pub mod aggregate;
pub mod boundary;
pub mod error;
pub mod exchange;
pub mod ffi;
pub mod operators;
pub mod registry;
pub mod state;

pub use aggforge_runtime as runtime;

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobjectArray, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;

use boundary::entry;
use error::{BridgeError, BridgeResult};

fn to_jboolean(value: bool) -> jboolean {
    if value {
        JNI_TRUE
    } else {
        JNI_FALSE
    }
}

fn read_string(env: &mut JNIEnv<'_>, text: &JString<'_>, what: &str) -> BridgeResult<String> {
    if text.is_null() {
        return Err(BridgeError::Ffi(format!("{what} is null")));
    }
    Ok(env.get_string(text)?.into())
}

/// A Java `byte[][]` holding a copy of each of `items`.
fn byte_arrays<'a>(
    env: &mut JNIEnv<'_>,
    items: impl ExactSizeIterator<Item = &'a [u8]>,
) -> BridgeResult<jobjectArray> {
    let len = jint::try_from(items.len())
        .map_err(|_| BridgeError::Ffi(format!("{} byte arrays are too many", items.len())))?;
    let out = env.new_object_array(len, "[B", JObject::null())?;
    for (i, bytes) in items.enumerate() {
        let array = env.byte_array_from_slice(bytes)?;
        env.set_object_array_element(&out, i as jint, &array)?;
        env.delete_local_ref(array)?;
    }
    Ok(out.into_raw())
}

/// `static native String admit(String planJson)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_admit<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    plan: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let plan = read_string(env, &plan, "the plan")?;
        Ok(env.new_string(aggregate::admit(&plan))?.into_raw())
    })
}

/// `static native String arrowLayout(String sqlType)`: the `types.toml`
/// Arrow layout spelling of a SQL type as Flink spells it (e.g.
/// `Timestamp(Millisecond)`), or null when no type row covers it.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_arrowLayout<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    sql_type: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let text = read_string(env, &sql_type, "the SQL type")?;
        let layout = text
            .parse::<aggforge_runtime::types::SqlType>()
            .ok()
            .and_then(|ty| ty.layout());
        match layout {
            Some(layout) => Ok(env.new_string(layout.spelling())?.into_raw()),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// `static native long minimumBudget(String planJson, int batchRows)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_minimumBudget<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    plan: JString<'l>,
    batch_rows: jint,
) -> jlong {
    entry(&mut env, 0, |env| {
        let plan = read_string(env, &plan, "the plan")?;
        let rows = usize::try_from(batch_rows)
            .map_err(|_| BridgeError::Ffi(format!("batch rows {batch_rows} is negative")))?;
        let bytes = aggregate::minimum_budget(&plan, rows)?;
        Ok(jlong::try_from(bytes).unwrap_or(jlong::MAX))
    })
}

/// `static native long create(String planJson)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_create<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    plan: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let plan = read_string(env, &plan, "the plan")?;
        Ok(aggregate::create(&plan)? as jlong)
    })
}

/// `static native boolean process(long handle, long inArray, long inSchema,
/// long outArray, long outSchema)`.
///
/// # Safety
/// The four addresses must meet [`aggregate::process`]'s contract (Rust
/// can only refuse 0 and misaligned ones). Java's `ArrowAggregate` meets
/// it: it passes the `memoryAddress()` of four distinct structs it
/// allocated with `ArrowArray/ArrowSchema.allocateNew` (released) and
/// keeps open until `close`, fills the input pair with
/// `Data.exportVectorSchemaRoot` right before the call, and makes every
/// call from the operator's one thread.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_process<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    in_array: jlong,
    in_schema: jlong,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        // SAFETY: this function's contract is `aggregate::process`'s, for the
        // same four addresses, passed on unchanged.
        let emitted = unsafe {
            aggregate::process(handle as u64, in_array, in_schema, out_array, out_schema)?
        };
        Ok(to_jboolean(emitted))
    })
}

/// `static native boolean processMessage(long handle, byte[] message, int
/// fromRow, int toRow, long outArray, long outSchema)`: rows
/// `fromRow..toRow` of a columnar-exchange message.
///
/// # Safety
/// The two addresses must meet [`aggregate::process_message`]'s contract,
/// which Java's `ArrowAggregate` meets with its output structs as for
/// `process`.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_processMessage<
    'l,
>(
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
        // SAFETY: this function's contract is `aggregate::process_message`'s
        // for the same two addresses, passed on unchanged.
        let emitted = unsafe {
            aggregate::process_message(
                handle as u64,
                &bytes,
                row(from_row)?,
                row(to_row)?,
                out_array,
                out_schema,
            )?
        };
        Ok(to_jboolean(emitted))
    })
}

/// `static native long create(String planJson, int channels, int
/// maxParallelism)` of `NativeExchange`: a router for the plan's batches.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeExchange_create<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    plan: JString<'l>,
    channels: jint,
    max_parallelism: jint,
) -> jlong {
    entry(&mut env, 0, |env| {
        let plan = read_string(env, &plan, "the plan")?;
        Ok(exchange::create(&plan, channels, max_parallelism)? as jlong)
    })
}

/// `static native byte[][] route(long handle, long inArray, long inSchema,
/// long[] marks)` of `NativeExchange`: one message per channel with rows,
/// the channel and the in-band watermarks (`marks`: position and watermark
/// pairs, or null for none) in each message's header.
///
/// # Safety
/// The two addresses must meet [`exchange::route`]'s contract. Java's
/// `ArrowExchange` meets it: it exports the batch into two structs it
/// allocated with `allocateNew` right before the call, from the operator's
/// one thread.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeExchange_route<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    in_array: jlong,
    in_schema: jlong,
    marks: JLongArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let marks = if marks.is_null() {
            Vec::new()
        } else {
            let mut pairs = vec![0i64; env.get_array_length(&marks)? as usize];
            env.get_long_array_region(&marks, 0, &mut pairs)?;
            exchange::marks_of(&pairs)?
        };
        // SAFETY: `exchange::route` needs only `import_batch`'s contract for
        // the two addresses, which is this function's contract and is passed
        // on unchanged; `marks` is an owned Rust copy of the Java array, so
        // no JNI reference outlives this call.
        let messages = unsafe { exchange::route(handle as u64, in_array, in_schema, &marks)? };
        byte_arrays(env, messages.iter().map(|(_, bytes)| bytes.as_slice()))
    })
}

/// `static native byte[][] routeHeld(long handle)` of `NativeExchange`: the
/// held batches routed as one, one message per channel with rows.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeExchange_routeHeld<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let messages = exchange::route_held(handle as u64)?;
        byte_arrays(env, messages.iter().map(|(_, bytes)| bytes.as_slice()))
    })
}

/// `static native int flushInto(long handle, long router)` of
/// `NativeAggregate`: the bundle's partials held by the router; the rows
/// flushed.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_flushInto<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    router: jlong,
) -> jint {
    entry(&mut env, 0, |_| {
        let rows = aggregate::flush_into(handle as u64, router as u64)?;
        jint::try_from(rows).map_err(|_| BridgeError::Ffi(format!("{rows} flushed rows")))
    })
}

/// `static native void close(long handle)` of `NativeExchange`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeExchange_close<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    entry(&mut env, (), |_| exchange::close(handle as u64))
}

/// `static native boolean flush(long handle, long outArray, long outSchema)`.
///
/// # Safety
/// The two addresses must meet [`aggregate::flush`]'s contract. Java's
/// `ArrowAggregate` meets it with its output structs, as for
/// `process`: allocated with `allocateNew`, renewed (released) after each
/// import, kept open until `close`, used from one thread.
#[no_mangle]
pub unsafe extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_flush<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out_array: jlong,
    out_schema: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        // SAFETY: this function's contract is `aggregate::flush`'s, for the
        // same two addresses, passed on unchanged.
        let emitted = unsafe { aggregate::flush(handle as u64, out_array, out_schema)? };
        Ok(to_jboolean(emitted))
    })
}

/// `static native byte[][] snapshot(long handle)`: one payload per key
/// group (see `keyGroupOf`).
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_snapshot<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let payloads = aggregate::snapshot(handle as u64)?;
        byte_arrays(env, payloads.iter().map(Vec::as_slice))
    })
}

/// `static native int keyGroupOf(byte[] payload)`: the key group named in a
/// snapshot payload's header.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_keyGroupOf<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    payload: JByteArray<'l>,
) -> jint {
    entry(&mut env, -1, |env| {
        if payload.is_null() {
            return Err(BridgeError::Ffi("the payload is null".into()));
        }
        let bytes = env.convert_byte_array(&payload)?;
        Ok(jint::from(aggregate::payload_key_group(&bytes)?))
    })
}

/// `static native void restore(long handle, byte[][] payloads)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_restore<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    payloads: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        if payloads.is_null() {
            return Err(BridgeError::Ffi("the payload array is null".into()));
        }
        let len = env.get_array_length(&payloads)?;
        let mut parts = Vec::with_capacity(len as usize);
        for i in 0..len {
            let element = JByteArray::from(env.get_object_array_element(&payloads, i)?);
            if element.is_null() {
                return Err(BridgeError::Ffi(format!("payload {i} is null")));
            }
            parts.push(env.convert_byte_array(&element)?);
            env.delete_local_ref(element)?;
        }
        aggregate::restore(handle as u64, parts)
    })
}

/// `static native void setTime(long handle, long nowMs)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_setTime<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    now_ms: jlong,
) {
    entry(&mut env, (), |_| aggregate::set_time(handle as u64, now_ms))
}

/// `static native boolean advance(long handle, long watermark)`: a window
/// aggregate's event time moves to `watermark`; true when its next flush has
/// windows to fire or partials to emit.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_advance<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    watermark: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        aggregate::advance(handle as u64, watermark).map(to_jboolean)
    })
}

/// `static native boolean advanceIfGateShut(long handle, long watermark)`:
/// a local window phase's event time moves to `watermark` if its flush gate
/// stays shut whatever rows are pending; true when it did.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_advanceIfGateShut<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    watermark: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |_| {
        aggregate::advance_if_gate_shut(handle as u64, watermark).map(to_jboolean)
    })
}

/// `static native long nextFireTime(long handle)`: the processing time (ms)
/// a window aggregate's earliest pending window fires at, `Long.MAX_VALUE`
/// when none is pending.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_nextFireTime<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    entry(&mut env, i64::MAX, |_| {
        aggregate::next_fire_time(handle as u64)
    })
}

/// `static native String failure(long handle)`: Flink's message when a
/// function failed the query in the latest `process` or `flush`, or null.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_failure<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    entry(
        &mut env,
        std::ptr::null_mut(),
        |env| match aggregate::failure(handle as u64)? {
            Some(message) => Ok(env.new_string(message)?.into_raw()),
            None => Ok(std::ptr::null_mut()),
        },
    )
}

/// `static native String jitStatus(long handle)`: `fused N of M calls
/// (...)` or `static: <reason>`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_jitStatus<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let status = aggregate::jit_status(handle as u64)?;
        Ok(env.new_string(status)?.into_raw())
    })
}

/// `static native long memoryUsed(long handle)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_memoryUsed<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(aggregate::memory_used(handle as u64)? as jlong)
    })
}

/// `static native void stats(long handle, long[] out)`: fills `out[0..3]`
/// with the bytes held, the memory budget and the live groups.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_stats<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out: JLongArray<'l>,
) {
    entry(&mut env, (), |env| {
        if out.is_null() {
            return Err(BridgeError::Ffi("the stats array is null".into()));
        }
        let len = env.get_array_length(&out)?;
        if usize::try_from(len).map_or(true, |len| len < aggregate::STATS_LEN) {
            return Err(BridgeError::Ffi(format!(
                "the stats array holds {len} longs, {} needed",
                aggregate::STATS_LEN
            )));
        }
        let values = aggregate::stats_array(handle as u64)?;
        env.set_long_array_region(&out, 0, &values)?;
        Ok(())
    })
}

/// `static native void close(long handle)`.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_close<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    entry(&mut env, (), |_| aggregate::close(handle as u64))
}

/// `static native int openCount()`: operators created and not closed.
#[no_mangle]
pub extern "system" fn Java_dev_aggforge_flink_nativelib_NativeAggregate_openCount<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jint {
    entry(&mut env, 0, |_| Ok(aggregate::open_count() as jint))
}
