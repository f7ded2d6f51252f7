package io.tbmq.broker.util;

import java.time.Duration;
import java.util.function.IntSupplier;

/** Waiting, on a thread that may block (shutdown), for a count to reach zero. */
public final class Countdown {
    private static final long POLL_MILLIS = 10;

    private Countdown() {
    }

    /** Polls {@code count} until it is 0 or {@code timeout} passed; returns its last value. */
    public static int awaitZero(IntSupplier count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int left;
        while ((left = count.getAsInt()) > 0 && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return left;
    }
}
