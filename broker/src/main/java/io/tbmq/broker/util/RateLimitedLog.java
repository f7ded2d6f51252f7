package io.tbmq.broker.util;

import java.util.concurrent.atomic.AtomicLong;

import org.jboss.logging.Logger;

/**
 * At most a few lines per second for one kind of event (hostile input must not flood the log);
 * the lines it suppresses are counted and reported with the next line it lets through.
 */
public final class RateLimitedLog {
    private final Logger log;
    private final int perSecond;
    private final AtomicLong windowStart = new AtomicLong();
    private final AtomicLong inWindow = new AtomicLong();
    private final AtomicLong suppressed = new AtomicLong();

    public RateLimitedLog(Logger log, int perSecond) {
        this.log = log;
        this.perSecond = perSecond;
    }

    public void info(String format, Object... args) {
        long now = System.currentTimeMillis() / 1000;
        long start = windowStart.get();
        if (start != now && windowStart.compareAndSet(start, now)) {
            inWindow.set(0);
        }
        if (inWindow.incrementAndGet() > perSecond) {
            suppressed.incrementAndGet();
            return;
        }
        long skipped = suppressed.getAndSet(0);
        String line = String.format(format, args);
        log.info(skipped > 0 ? line + " (" + skipped + " similar lines suppressed)" : line);
    }
}
