package io.tbmq.broker.util;

/**
 * Epoch time in microseconds from the monotonic clock, anchored once at start: cheap enough to
 * stamp every message, precise enough for microsecond latency figures on one machine.
 */
public final class Clock {
    private static final long EPOCH_MICROS_AT_START = System.currentTimeMillis() * 1000;
    private static final long NANOS_AT_START = System.nanoTime();

    private Clock() {
    }

    public static long nowMicros() {
        return EPOCH_MICROS_AT_START + (System.nanoTime() - NANOS_AT_START) / 1000;
    }
}
