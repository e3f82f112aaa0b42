package dev.aggforge.flink.nativelib;

import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One native group-aggregate operator with its Arrow plumbing: the C Data Interface structs are
 * allocated once and reused for every batch. Not thread-safe.
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
        this.handle = NativeAggregate.create(planJson);
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
        try {
            emitted =
                    NativeAggregate.process(
                            handle,
                            inArray.memoryAddress(),
                            inSchema.memoryAddress(),
                            outArray.memoryAddress(),
                            outSchema.memoryAddress());
        } finally {
            // No-ops when the native side took the export over, as it does unless the
            // addresses were refused.
            inArray.release();
            inSchema.release();
        }
        return emitted ? importOutput() : null;
    }

    /** Finishes the open bundle; returns its rows (the caller closes the root), or null. */
    public VectorSchemaRoot flush() {
        checkOpen();
        boolean emitted =
                NativeAggregate.flush(handle, outArray.memoryAddress(), outSchema.memoryAddress());
        return emitted ? importOutput() : null;
    }

    /** Imports the output batch; the import takes the structs over and closes them. */
    private VectorSchemaRoot importOutput() {
        ArrowArray array = outArray;
        ArrowSchema schema = outSchema;
        outArray = ArrowArray.allocateNew(allocator);
        outSchema = ArrowSchema.allocateNew(allocator);
        return Data.importVectorSchemaRoot(allocator, array, schema, dictionaries);
    }

    /** See {@link NativeAggregate#snapshot}. */
    public byte[][] snapshot() {
        checkOpen();
        return NativeAggregate.snapshot(handle);
    }

    /** See {@link NativeAggregate#restore}. */
    public void restore(byte[][] payloads) {
        checkOpen();
        NativeAggregate.restore(handle, payloads);
    }

    /** Bytes of state and bundle the native operator holds. */
    public long memoryUsed() {
        checkOpen();
        return NativeAggregate.memoryUsed(handle);
    }

    /** Sets the processing time (ms) state TTL is judged by; sweeps expired state. */
    public void setTime(long nowMs) {
        checkOpen();
        NativeAggregate.setTime(handle, nowMs);
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
        try {
            NativeAggregate.close(closing);
        } finally {
            inArray.close();
            inSchema.close();
            outArray.close();
            outSchema.close();
            dictionaries.close();
        }
    }
}
