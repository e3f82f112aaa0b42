package dev.aggforge.flink.nativelib;

/**
 * The native methods of the aggforge runtime (Rust, {@code jni-bridge/src/lib.rs}). An operator
 * is a {@code long} handle from {@link #create}; every call checks its handle, so a closed or
 * unknown one raises {@link AggforgeNativeException} rather than touching freed memory. Every
 * failure, including a panic in native code, raises {@link AggforgeNativeException} with the
 * native message.
 *
 * <p>Batches cross through the Arrow C Data Interface: the caller allocates {@code ArrowArray}
 * and {@code ArrowSchema} structs (arrow-c-data) and passes their memory addresses. Input
 * batches are exported struct arrays (a {@code VectorSchemaRoot}); the native side takes them
 * over (the structs are left released) and releases their buffers before the call returns. An
 * output batch is written into the output structs, which the caller imports and owns.
 *
 * <p>{@link ArrowAggregate} wraps these methods with the Arrow plumbing.
 */
public final class NativeAggregate {

    static {
        NativeLibrary.load();
    }

    private NativeAggregate() {}

    /** Makes sure the library is loaded (class initialization does it). */
    public static void ensureLoaded() {
        // Running the static initializer is the effect.
    }

    /**
     * Whether the runtime runs the plan (wire format version 1): {@code "admitted: <spec>, ..."}
     * (one specialization per call) or the reason it does not.
     */
    public static native String admit(String planJson);

    /**
     * The Arrow layout {@code specs/types.toml} gives a SQL type as Flink spells it ({@code
     * LogicalType.asSerializableString()}, e.g. {@code TIMESTAMP(3) WITH LOCAL TIME ZONE}): the
     * layout's spelling such as {@code Timestamp(Millisecond)}, or null when no type row covers
     * the type.
     */
    public static native String arrowLayout(String sqlType);

    /** Creates an operator with empty state for an admitted plan; returns its handle. */
    public static native long create(String planJson);

    /**
     * Processes the exported input batch; returns true when it wrote an output batch (immediate
     * mode's changelog rows) into the output structs.
     */
    public static native boolean process(
            long handle, long inArrayAddress, long inSchemaAddress, long outArrayAddress, long outSchemaAddress);

    /**
     * Processes rows {@code fromRow..toRow} of a columnar-exchange message ({@link
     * NativeExchange#route}); returns true when it wrote an output batch (immediate mode's
     * changelog rows) into the output structs.
     */
    public static native boolean processMessage(
            long handle, byte[] message, int fromRow, int toRow, long outArray, long outSchema);

    /**
     * Finishes the open bundle (mini-batch, local, global); returns true when it wrote an output
     * batch into the output structs.
     */
    public static native boolean flush(long handle, long outArrayAddress, long outSchemaAddress);

    /**
     * Binds a GROUP BY aggregate's state to Flink's accumulator layout ({@code accTypesJson}: a
     * JSON array of Flink type texts, the accState row's fields); returns null when bound, else
     * why the operator keeps aggforge's snapshot format.
     */
    public static native String bindFlinkState(long handle, String accTypesJson);

    /**
     * Exports the groups whose state changed since the last {@link #stateChangesWritten} (key
     * columns, accumulator columns, {@code $row_kind} +I to write or -D to clear); false when none
     * changed.
     */
    public static native boolean stateChanges(
            long handle, long outArrayAddress, long outSchemaAddress);

    /** The changes the last {@link #stateChanges} exported are in the state backend. */
    public static native void stateChangesWritten(long handle);

    /**
     * Flink restored groups into the state backend: every group a batch needs that is not cached
     * is read (otherwise only groups the operator wrote there).
     */
    public static native void backendRestored(long handle);

    /** Takes accumulator rows read from the state backend (keys, then accumulators) as state. */
    public static native void loadState(long handle, long inArrayAddress, long inSchemaAddress);

    /**
     * Finishes the open bundle of a local phase and hands its partials, without row kinds, to the
     * exchange router {@code router} ({@link NativeExchange#hold}) instead of to Java; returns the
     * rows flushed.
     */
    public static native int flushInto(long handle, long router);

    /**
     * The operator's state: one payload per key group with state, in ascending key group order,
     * in the runtime's versioned snapshot format (its header names the key group: {@link
     * #keyGroupOf}). The bundle must be flushed first.
     */
    public static native byte[][] snapshot(long handle);

    /** Restores payloads of {@link #snapshot} (any subset of key groups) into a fresh operator. */
    public static native void restore(long handle, byte[][] payloads);

    /** Bytes of state and bundle the operator holds. */
    public static native long memoryUsed(long handle);

    /**
     * Flink's message when a function failed the query in the latest {@link #process} or {@link
     * #flush} (SINGLE_VALUE's second value), whose output holds the rows Flink emits before
     * failing; null otherwise.
     */
    public static native String failure(long handle);

    /**
     * Whether the operator's fixed-width calls run in one JIT-compiled loop ({@code
     * table.exec.aggforge.jit}): {@code fused N of M calls (...)}, or {@code static: <reason>}.
     */
    public static native String jitStatus(long handle);

    /** Index in a {@link #stats} array: bytes of state and bundle held (as {@link #memoryUsed}). */
    public static final int STATS_MEMORY_USED = 0;

    /** Index in a {@link #stats} array: the memory budget in bytes. */
    public static final int STATS_MEMORY_BUDGET = 1;

    /** Index in a {@link #stats} array: groups with state (local phase: in the open bundle). */
    public static final int STATS_GROUPS = 2;

    /** Index in a {@link #stats} array: rows a window aggregate dropped as late so far. */
    public static final int STATS_LATE_DROPPED = 3;

    /** Length of a {@link #stats} array. */
    public static final int STATS_LENGTH = 4;

    /**
     * Writes the operator's size into {@code out} (at least {@link #STATS_LENGTH} longs, indexed
     * by the {@code STATS_*} constants). The group count is O(1); the bytes are measured, which
     * is O(1) for fixed-width state and walks the groups for string or retracting MIN/MAX, so
     * callers on a hot path rate-limit it. Like every call on a handle, only from the thread
     * that owns the operator.
     */
    public static native void stats(long handle, long[] out);

    /**
     * Moves a window aggregate's event time to {@code watermark}: its next {@link #flush} fires
     * the windows it passed, and rows processed after it are late against it. Returns whether that
     * flush has windows to fire (or, for a local phase, partials of a slice that could fire
     * downstream). GROUP BY aggregates ignore it (false).
     */
    public static native boolean advance(long handle, long watermark);

    /**
     * {@link #advance} when a local window phase's flush gate stays shut at {@code watermark}
     * whatever rows are pending (Flink's gate is aligned and the watermark is below its next
     * trigger watermark), so rows received before the watermark may be handed over after it;
     * returns whether it advanced. Otherwise nothing changes: hand the rows over, then {@link
     * #advance}.
     */
    public static native boolean advanceIfGateShut(long handle, long watermark);

    /**
     * Sets the processing time (ms): what a GROUP BY aggregate's state TTL is judged by, and the
     * time of the rows the next {@link #process} takes for processing-time windows.
     */
    public static native void setTime(long handle, long nowMs);

    /**
     * The processing time (ms) a window aggregate's earliest pending window fires at ({@code
     * Long.MAX_VALUE}: none pending); processing-time operators set a timer for it.
     */
    public static native long nextFireTime(long handle);

    /** Closes the operator; its handle is invalid afterwards. */
    public static native void close(long handle);

    /** Operators created and not yet closed, in this process. */
    public static native int openCount();

    /** The key group named in the header of a {@link #snapshot} payload. */
    public static native int keyGroupOf(byte[] payload);

    /**
     * The least memory budget (bytes) that holds one batch of {@code batchRows} rows of the plan
     * when every row starts a new group.
     */
    public static native long minimumBudget(String planJson, int batchRows);

    /**
     * Keeps the batch at {@code inArray}/{@code inSchema} for {@link #processPending} and writes
     * the keys of the groups it touches that the operator does not hold to {@code
     * outArray}/{@code outSchema}; false when it holds them all (state bound to Flink's layout).
     */
    static native boolean probe(
            long handle, long inArray, long inSchema, long outArray, long outSchema);

    /** {@link #probe} for rows {@code fromRow..toRow} of a columnar-exchange message. */
    static native boolean probeMessage(
            long handle, byte[] message, int fromRow, int toRow, long outArray, long outSchema);

    /** Folds the batch {@link #probe} kept, emitting like {@link #process}. */
    static native boolean processPending(long handle, long outArray, long outSchema);

    /**
     * Whether the operator should be emptied into the state backend before the next batch of up
     * to {@code batchRows} rows (its budget is nearly used; never while a bundle is open).
     */
    static native boolean shouldEvict(long handle, int batchRows);

    /**
     * Empties the operator, writing every group changed since the last write-back as one change
     * batch to {@code outArray}/{@code outSchema} (false when none changed).
     */
    static native boolean evictAll(long handle, long outArray, long outSchema);
}
