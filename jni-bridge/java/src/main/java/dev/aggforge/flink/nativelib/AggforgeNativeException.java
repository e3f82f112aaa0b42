package dev.aggforge.flink.nativelib;

/**
 * Raised by every native call that fails: a runtime error (bad plan, bad batch, memory budget,
 * snapshot), an invalid handle, a malformed Arrow C Data Interface struct, or a panic caught at
 * the native boundary. The message is the native one.
 */
public class AggforgeNativeException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** An exception with the native message. */
    public AggforgeNativeException(String message) {
        super(message);
    }
}
