package dev.aggforge.flink.nativelib;

import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.table.api.TableRuntimeException;

/**
 * One native group-aggregate operator with its Arrow plumbing: the C Data Interface structs are
 * allocated once and reused for every batch. It also adds up the time spent in its native calls
 * ({@link #nativeNanos}). Not thread-safe: one thread (the operator's) makes every call.
 */
public final class ArrowAggregate implements AutoCloseable {

    private final BufferAllocator allocator;
    private final ArrowArray inArray;
    private final ArrowSchema inSchema;
    /** Output structs for the next call; importing an output closes them, so they are renewed. */
    private ArrowArray outArray;
    private ArrowSchema outSchema;
    private final CDataDictionaryProvider dictionaries = new CDataDictionaryProvider();
    private long handle;
    /** Nanoseconds spent inside native calls on this operator, creation included. */
    private long nativeNanos;

    /**
     * Creates the native operator.
     *
     * @param planJson the runtime plan (wire format version 1)
     * @param allocator allocates the structs and the output batches
     * @throws AggforgeNativeException if the runtime refuses the plan
     */
    public ArrowAggregate(String planJson, BufferAllocator allocator) {
        NativeAggregate.ensureLoaded();
        this.allocator = allocator;
        long start = System.nanoTime();
        this.handle = NativeAggregate.create(planJson);
        this.nativeNanos = System.nanoTime() - start;
        this.inArray = ArrowArray.allocateNew(allocator);
        this.inSchema = ArrowSchema.allocateNew(allocator);
        this.outArray = ArrowArray.allocateNew(allocator);
        this.outSchema = ArrowSchema.allocateNew(allocator);
    }

    /** See {@link NativeAggregate#admit}. */
    public static String admit(String planJson) {
        NativeAggregate.ensureLoaded();
        return NativeAggregate.admit(planJson);
    }

    /** See {@link NativeAggregate#minimumBudget}. */
    public static long minimumBudget(String planJson, int batchRows) {
        NativeAggregate.ensureLoaded();
        return NativeAggregate.minimumBudget(planJson, batchRows);
    }

    /** Whether an {@link #admit} answer admits the plan. */
    public static boolean isAdmitted(String answer) {
        return answer.startsWith("admitted: ");
    }

    /**
     * Processes {@code batch} (not modified; the native side is done with it when this returns,
     * so the caller may reset it). Returns the rows to emit now (the caller closes the root), or
     * null.
     */
    public VectorSchemaRoot process(VectorSchemaRoot batch) {
        checkOpen();
        Data.exportVectorSchemaRoot(allocator, batch, null, inArray, inSchema);
        boolean emitted;
        long start = System.nanoTime();
        try {
            emitted =
                    NativeAggregate.process(
                            handle,
                            inArray.memoryAddress(),
                            inSchema.memoryAddress(),
                            outArray.memoryAddress(),
                            outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
            // No-ops when the native side took the export over, as it does unless the
            // addresses were refused.
            inArray.release();
            inSchema.release();
        }
        return emitted ? importOutput() : null;
    }

    /**
     * Processes rows {@code fromRow..toRow} of a columnar-exchange message; returns the rows to
     * emit now (the caller closes the root), or null.
     */
    public VectorSchemaRoot processMessage(byte[] message, int fromRow, int toRow) {
        checkOpen();
        boolean emitted;
        long start = System.nanoTime();
        try {
            emitted =
                    NativeAggregate.processMessage(
                            handle,
                            message,
                            fromRow,
                            toRow,
                            outArray.memoryAddress(),
                            outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        return emitted ? importOutput() : null;
    }

    /** Finishes the open bundle; returns its rows (the caller closes the root), or null. */
    public VectorSchemaRoot flush() {
        checkOpen();
        boolean emitted;
        long start = System.nanoTime();
        try {
            emitted = NativeAggregate.flush(handle, outArray.memoryAddress(), outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        return emitted ? importOutput() : null;
    }

    /**
     * Finishes the open bundle of a local phase into {@code router}, which holds the partials for
     * its next {@link ArrowExchange#routeHeld}; returns the rows flushed.
     */
    public int flushInto(ArrowExchange router) {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeAggregate.flushInto(handle, router.handle());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /** Imports the output batch; the import takes the structs over and closes them. */
    private VectorSchemaRoot importOutput() {
        ArrowArray array = outArray;
        ArrowSchema schema = outSchema;
        outArray = ArrowArray.allocateNew(allocator);
        outSchema = ArrowSchema.allocateNew(allocator);
        return Data.importVectorSchemaRoot(allocator, array, schema, dictionaries);
    }

    /** See {@link NativeAggregate#bindFlinkState}. */
    public String bindFlinkState(String accTypesJson) {
        checkOpen();
        return NativeAggregate.bindFlinkState(handle, accTypesJson);
    }

    /**
     * The groups whose state changed since the last {@link #stateChangesWritten} (the caller
     * closes the root), or null (see {@link NativeAggregate#stateChanges}).
     */
    public VectorSchemaRoot stateChanges() {
        checkOpen();
        boolean changed;
        long start = System.nanoTime();
        try {
            changed =
                    NativeAggregate.stateChanges(
                            handle, outArray.memoryAddress(), outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        return changed ? importOutput() : null;
    }

    /** See {@link NativeAggregate#stateChangesWritten}. */
    public void stateChangesWritten() {
        checkOpen();
        NativeAggregate.stateChangesWritten(handle);
    }

    /** See {@link NativeAggregate#backendRestored}. */
    public void backendRestored() {
        checkOpen();
        NativeAggregate.backendRestored(handle);
    }

    /** Takes {@code rows} (keys, then accumulators; not modified) as state. */
    public void loadState(VectorSchemaRoot rows) {
        checkOpen();
        Data.exportVectorSchemaRoot(allocator, rows, null, inArray, inSchema);
        long start = System.nanoTime();
        try {
            NativeAggregate.loadState(handle, inArray.memoryAddress(), inSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
            inArray.release();
            inSchema.release();
        }
    }

    /**
     * Keeps {@code batch} (not modified) for {@link #processPending} and returns the keys of the
     * groups it touches that the native cache does not hold (the caller closes the root), or
     * null when it holds them all.
     */
    public VectorSchemaRoot probe(VectorSchemaRoot batch) {
        checkOpen();
        Data.exportVectorSchemaRoot(allocator, batch, null, inArray, inSchema);
        boolean missing;
        long start = System.nanoTime();
        try {
            missing =
                    NativeAggregate.probe(
                            handle,
                            inArray.memoryAddress(),
                            inSchema.memoryAddress(),
                            outArray.memoryAddress(),
                            outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
            inArray.release();
            inSchema.release();
        }
        return missing ? importOutput() : null;
    }

    /** {@link #probe} for rows {@code fromRow..toRow} of a columnar-exchange message. */
    public VectorSchemaRoot probeMessage(byte[] message, int fromRow, int toRow) {
        checkOpen();
        boolean missing;
        long start = System.nanoTime();
        try {
            missing =
                    NativeAggregate.probeMessage(
                            handle,
                            message,
                            fromRow,
                            toRow,
                            outArray.memoryAddress(),
                            outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        return missing ? importOutput() : null;
    }

    /** Folds the batch {@link #probe} kept; returns what {@link #process} would. */
    public VectorSchemaRoot processPending() {
        checkOpen();
        boolean emitted;
        long start = System.nanoTime();
        try {
            emitted =
                    NativeAggregate.processPending(
                            handle, outArray.memoryAddress(), outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        return emitted ? importOutput() : null;
    }

    /** See {@link NativeAggregate#shouldEvict}. */
    public boolean shouldEvict(int batchRows) {
        checkOpen();
        return NativeAggregate.shouldEvict(handle, batchRows);
    }

    /**
     * Empties the native cache; returns every changed group's change row, which the caller must
     * write to the state backend (and close), or null when none changed.
     */
    public VectorSchemaRoot evictAll() {
        checkOpen();
        boolean changed;
        long start = System.nanoTime();
        try {
            changed = NativeAggregate.evictAll(handle, outArray.memoryAddress(), outSchema.memoryAddress());
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        return changed ? importOutput() : null;
    }

    /** See {@link NativeAggregate#snapshot}. */
    public byte[][] snapshot() {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeAggregate.snapshot(handle);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /** {@link NativeAggregate#keyGroupOf}, with its time counted in {@link #nativeNanos}. */
    public int keyGroupOf(byte[] payload) {
        long start = System.nanoTime();
        try {
            return NativeAggregate.keyGroupOf(payload);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /** See {@link NativeAggregate#restore}. */
    public void restore(byte[][] payloads) {
        checkOpen();
        long start = System.nanoTime();
        try {
            NativeAggregate.restore(handle, payloads);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /**
     * Throws Flink's error when a function failed the query in the latest {@link #process} or
     * {@link #flush} (call it after emitting their rows, as Flink emits them before failing).
     */
    /** The operator's JIT status ({@link NativeAggregate#jitStatus}). */
    public String jitStatus() {
        checkOpen();
        return NativeAggregate.jitStatus(handle);
    }

    public void throwIfFailed() {
        checkOpen();
        String message;
        long start = System.nanoTime();
        try {
            message = NativeAggregate.failure(handle);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
        if (message != null) {
            // What Flink's own function throws (its generated THROW_EXCEPTION call).
            throw new TableRuntimeException(message);
        }
    }

    /** Bytes of state and bundle the native operator holds. */
    public long memoryUsed() {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeAggregate.memoryUsed(handle);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /**
     * Fills {@code out} with bytes held, budget and groups (see {@link NativeAggregate#stats} for
     * the layout and the cost).
     */
    public void stats(long[] out) {
        checkOpen();
        long start = System.nanoTime();
        try {
            NativeAggregate.stats(handle, out);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /**
     * Moves a window aggregate's event time to {@code watermark}; whether a flush has anything to
     * do now (see {@link NativeAggregate#advance}).
     */
    public boolean advance(long watermark) {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeAggregate.advance(handle, watermark);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /** See {@link NativeAggregate#advanceIfGateShut}. */
    public boolean advanceIfGateShut(long watermark) {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeAggregate.advanceIfGateShut(handle, watermark);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /** When the earliest pending window fires (see {@link NativeAggregate#nextFireTime}). */
    public long nextFireTime() {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeAggregate.nextFireTime(handle);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /**
     * Sets the processing time (ms): state TTL is judged by it (GROUP BY; sweeps expired state),
     * processing-time windows place the next rows at it.
     */
    public void setTime(long nowMs) {
        checkOpen();
        long start = System.nanoTime();
        try {
            NativeAggregate.setTime(handle, nowMs);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /**
     * Nanoseconds spent inside this operator's native calls so far (create, process, flush,
     * snapshot, restore, setTime, stats, memoryUsed, keyGroupOf, close), by {@link
     * System#nanoTime}. Read it on the thread that makes the calls.
     */
    public long nativeNanos() {
        return nativeNanos;
    }

    /** The native handle (0 once closed). */
    public long handle() {
        return handle;
    }

    private void checkOpen() {
        if (handle == 0) {
            throw new IllegalStateException("the native aggregate is closed");
        }
    }

    /** Closes the native operator and frees the structs; idempotent. */
    @Override
    public void close() {
        if (handle == 0) {
            return;
        }
        long closing = handle;
        handle = 0;
        long start = System.nanoTime();
        try {
            NativeAggregate.close(closing);
        } finally {
            nativeNanos += System.nanoTime() - start;
            inArray.close();
            inSchema.close();
            outArray.close();
            outSchema.close();
            dictionaries.close();
        }
    }
}
