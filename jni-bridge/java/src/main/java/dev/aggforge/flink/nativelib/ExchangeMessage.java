package dev.aggforge.flink.nativelib;

/**
 * Reads the header of a columnar-exchange message: the channel it is routed to and its row count,
 * two big-endian ints in front of the rows (an Arrow IPC stream). The layout is {@code
 * aggforge_runtime::exchange}'s.
 */
public final class ExchangeMessage {

    /** Bytes of the header. */
    public static final int HEADER_BYTES = 8;

    private ExchangeMessage() {}

    /** The channel {@code message} is routed to. */
    public static int channel(byte[] message) {
        return readInt(message, 0);
    }

    /** The rows {@code message} carries. */
    public static int rows(byte[] message) {
        return readInt(message, 4);
    }

    private static int readInt(byte[] message, int at) {
        if (message.length < HEADER_BYTES) {
            throw new IllegalArgumentException(
                    "an exchange message of " + message.length + " bytes has no header");
        }
        return (message[at] & 0xff) << 24
                | (message[at + 1] & 0xff) << 16
                | (message[at + 2] & 0xff) << 8
                | (message[at + 3] & 0xff);
    }
}
