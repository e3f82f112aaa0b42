package dev.aggforge.flink.operator;

import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;

/**
 * The {@code table.exec.aggforge.max-delay} clock of a partly filled batch: the batch's first row
 * starts it, and once the delay has passed in processing time it hands over whatever is pending
 * (possibly nothing, when the batch left earlier). At most one timer is registered at a time.
 */
public final class MaxDelayTimer {

    private final ProcessingTimeService time;
    private final long delayMs;
    private final Runnable handOver;
    /** Whether a timer is registered and has not fired yet. */
    private boolean pending;

    /**
     * A clock on {@code time} that calls {@code handOver} {@code delayMs} after a batch's first
     * row (never when {@code delayMs} is 0).
     */
    public MaxDelayTimer(ProcessingTimeService time, long delayMs, Runnable handOver) {
        this.time = time;
        this.delayMs = delayMs;
        this.handOver = handOver;
    }

    /** Called after a row joined the batch, which now holds {@code pendingRows} rows. */
    public void rowAdded(int pendingRows) {
        if (delayMs > 0 && !pending && pendingRows == 1) {
            pending = true;
            time.registerTimer(
                    time.getCurrentProcessingTime() + delayMs,
                    timestamp -> {
                        pending = false;
                        handOver.run();
                    });
        }
    }
}
