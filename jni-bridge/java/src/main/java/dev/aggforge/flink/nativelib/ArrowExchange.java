package dev.aggforge.flink.nativelib;

import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One native exchange router with its Arrow plumbing (see {@link NativeExchange}): the C Data
 * Interface structs are allocated once and reused for every batch. Not thread-safe: one thread
 * (the sending operator's) makes every call.
 */
public final class ArrowExchange implements AutoCloseable {

    private final BufferAllocator allocator;
    private final ArrowArray inArray;
    private final ArrowSchema inSchema;
    private long handle;
    /** Nanoseconds spent inside native calls on this router, creation included. */
    private long nativeNanos;

    /**
     * Creates the native router.
     *
     * @param planJson the receiving aggregate's runtime plan (its group keys route the rows)
     * @param channels the receiving aggregate's parallelism
     * @param maxParallelism its number of key groups
     * @param allocator allocates the structs
     */
    public ArrowExchange(String planJson, int channels, int maxParallelism, BufferAllocator allocator) {
        this.allocator = allocator;
        long start = System.nanoTime();
        this.handle = NativeExchange.create(planJson, channels, maxParallelism);
        this.nativeNanos = System.nanoTime() - start;
        this.inArray = ArrowArray.allocateNew(allocator);
        this.inSchema = ArrowSchema.allocateNew(allocator);
    }

    /**
     * Routes {@code batch} (not modified; the native side is done with it when this returns, so
     * the caller may reset it): one message per channel with rows, each with the in-band
     * watermarks {@code marks} ({@code [position, watermark, ...]} in {@code batch}, or null) at
     * its own positions.
     */
    public byte[][] route(VectorSchemaRoot batch, long[] marks) {
        checkOpen();
        Data.exportVectorSchemaRoot(allocator, batch, null, inArray, inSchema);
        long start = System.nanoTime();
        try {
            return NativeExchange.route(
                    handle, inArray.memoryAddress(), inSchema.memoryAddress(), marks);
        } finally {
            nativeNanos += System.nanoTime() - start;
            inArray.release();
            inSchema.release();
        }
    }

    /** Routes the held batches as one: one message per channel with rows. */
    public byte[][] routeHeld() {
        checkOpen();
        long start = System.nanoTime();
        try {
            return NativeExchange.routeHeld(handle);
        } finally {
            nativeNanos += System.nanoTime() - start;
        }
    }

    /** The native handle (0 once closed). */
    long handle() {
        checkOpen();
        return handle;
    }

    private void checkOpen() {
        if (handle == 0) {
            throw new IllegalStateException("the exchange router is closed");
        }
    }

    /** Nanoseconds spent inside this router's native calls so far. */
    public long nativeNanos() {
        return nativeNanos;
    }

    @Override
    public void close() {
        try {
            if (handle != 0) {
                long h = handle;
                handle = 0;
                NativeExchange.close(h);
            }
        } finally {
            inArray.close();
            inSchema.close();
        }
    }
}
