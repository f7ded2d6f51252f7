package io.tbmq.broker.util;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

/**
 * At most a few lines per second (or per window) for one kind of event: hostile input must not
 * flood the log, nor must a condition that lasts hours; the lines it suppresses are counted and
 * reported with the next line it lets through.
 */
public final class RateLimitedLog {
    /** Where warnings go, with their stack trace; null: to {@link #out} (tests). */
    private final Logger log;
    private final Consumer<String> out;
    private final int perWindow;
    private final long windowMillis;
    private final LongSupplier clock;
    private final AtomicLong windowStart = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong inWindow = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();

    public RateLimitedLog(Logger log, int perSecond) {
        this(log, perSecond, Duration.ofSeconds(1));
    }

    /** At most {@code perWindow} lines in each {@code window}. */
    public RateLimitedLog(Logger log, int perWindow, Duration window) {
        this(log, log::info, perWindow, window, System::currentTimeMillis);
    }

    RateLimitedLog(Consumer<String> out, int perWindow, Duration window, LongSupplier clock) {
        this(null, out, perWindow, window, clock);
    }

    private RateLimitedLog(Logger log, Consumer<String> out, int perWindow, Duration window, LongSupplier clock) {
        this.log = log;
        this.out = out;
        this.perWindow = perWindow;
        this.windowMillis = Math.max(1, window.toMillis());
        this.clock = clock;
    }

    public void info(String format, Object... args) {
        String line = admitted(format, args);
        if (line != null) {
            out.accept(line);
        }
    }

    /** A warning with the stack trace of {@code error}: for a fault, not for a condition that is expected to pass. */
    public void warn(Throwable error, String format, Object... args) {
        String line = admitted(format, args);
        if (line == null) {
            return;
        }
        if (log != null) {
            log.warn(line, error);
        } else {
            out.accept(line);
        }
    }

    /** The line to say now, or null when this window has had its lines. */
    private String admitted(String format, Object... args) {
        long now = clock.getAsLong() / windowMillis;
        long start = windowStart.get();
        if (start != now && windowStart.compareAndSet(start, now)) {
            inWindow.set(0);
        }
        if (inWindow.incrementAndGet() > perWindow) {
            suppressed.incrementAndGet();
            return null;
        }
        long skipped = suppressed.getAndSet(0);
        String line = String.format(format, args);
        return skipped > 0 ? line + " (" + skipped + " similar lines suppressed)" : line;
    }
}
