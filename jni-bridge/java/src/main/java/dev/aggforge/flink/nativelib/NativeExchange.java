package dev.aggforge.flink.nativelib;

/**
 * The native methods of the columnar exchange's sending half (Rust, {@code
 * jni-bridge/src/exchange.rs}): a router, a {@code long} handle from {@link #create}, splits a
 * transposed batch by the channel (subtask) that owns each row's group key, as Flink's {@code
 * KeyGroupStreamPartitioner} would route the rows, and encodes one message per channel. Handles
 * and failures behave as {@link NativeAggregate}'s.
 *
 * <p>{@link ArrowExchange} wraps these methods with the Arrow plumbing; {@link
 * ExchangeMessage} reads a message's header.
 */
public final class NativeExchange {

    static {
        NativeLibrary.load();
    }

    private NativeExchange() {}

    /**
     * Creates a router for the batches the plan's operator reads, over {@code channels} channels
     * and {@code maxParallelism} key groups; returns its handle.
     */
    public static native long create(String planJson, int channels, int maxParallelism);

    /**
     * Routes the exported batch (the native side takes the export over): one message per channel
     * with rows, each naming its channel ({@link ExchangeMessage#channel}) and carrying the
     * in-band watermarks {@code marks} ({@code [position, watermark, ...]} in the batch, or null)
     * at its own rows' positions ({@link ExchangeMessage#marks}).
     */
    public static native byte[][] route(
            long handle, long inArrayAddress, long inSchemaAddress, long[] marks);

    /**
     * Routes the batches held by the router (a local phase's partials, {@link
     * NativeAggregate#flushInto}) as one, as {@link #route} routes one; holds nothing afterwards.
     */
    public static native byte[][] routeHeld(long handle);

    /** Closes the router; its handle is invalid afterwards. */
    public static native void close(long handle);
}
