package dev.aggforge.flink.nativelib;

/**
 * Reads the header of a columnar-exchange message: the channel it is routed to, its row count and
 * its in-band watermarks, big-endian in front of the rows (an Arrow IPC stream). The layout is
 * {@code aggforge_runtime::exchange}'s: channel, rows and watermark count as ints, then each
 * watermark as its row position (int) and value (long).
 */
public final class ExchangeMessage {

    /** Bytes of the fixed header (channel, rows, watermark count). */
    public static final int HEADER_BYTES = 12;

    /** Bytes of one in-band watermark. */
    public static final int MARK_BYTES = 12;

    private static final long[] NO_MARKS = new long[0];

    private ExchangeMessage() {}

    /** The channel {@code message} is routed to. */
    public static int channel(byte[] message) {
        return readInt(message, 0);
    }

    /** The rows {@code message} carries. */
    public static int rows(byte[] message) {
        return readInt(message, 4);
    }

    /**
     * The in-band watermarks of {@code message} as {@code [position, watermark, ...]}: each came
     * after the message's first {@code position} rows (checked: positions rise within the rows).
     */
    public static long[] marks(byte[] message) {
        int count = readInt(message, 8);
        if (count == 0) {
            return NO_MARKS;
        }
        if (count < 0 || count > (message.length - HEADER_BYTES) / MARK_BYTES) {
            throw new IllegalArgumentException(
                    "an exchange message of " + message.length + " bytes announces " + count
                            + " watermarks");
        }
        int rows = rows(message);
        long[] marks = new long[2 * count];
        long last = 0;
        for (int m = 0; m < count; m++) {
            int at = HEADER_BYTES + m * MARK_BYTES;
            long position = readInt(message, at);
            if (position < last || position > rows) {
                throw new IllegalArgumentException(
                        "an exchange message of " + rows + " rows puts watermark " + m
                                + " at row " + position);
            }
            last = position;
            marks[2 * m] = position;
            marks[2 * m + 1] = (long) readInt(message, at + 4) << 32
                    | (readInt(message, at + 8) & 0xffffffffL);
        }
        return marks;
    }

    /** Where the rows (the Arrow IPC stream) of {@code message} start. */
    public static int payloadOffset(byte[] message) {
        return HEADER_BYTES + MARK_BYTES * (marks(message).length / 2);
    }

    private static int readInt(byte[] message, int at) {
        if (message.length < at + 4 || message.length < HEADER_BYTES) {
            throw new IllegalArgumentException(
                    "an exchange message of " + message.length + " bytes has no header");
        }
        return (message[at] & 0xff) << 24
                | (message[at + 1] & 0xff) << 16
                | (message[at + 2] & 0xff) << 8
                | (message[at + 3] & 0xff);
    }
}
