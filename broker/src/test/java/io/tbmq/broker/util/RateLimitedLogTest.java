package io.tbmq.broker.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
    private final List<String> lines = new ArrayList<>();
    private final AtomicLong now = new AtomicLong(1_000_000);

    @Test
    void aConditionThatLastsIsSaidOncePerWindowWithHowOftenItWasNotSaid() {
        RateLimitedLog log = new RateLimitedLog(lines::add, 1, Duration.ofMinutes(1), now::get);
        for (int second = 0; second < 140; second++) {
            log.info("storing failed (%s); trying again", "OOM");
            now.addAndGet(1_000);
        }
        // 1,000,000 ms is 40 s into a minute: the first line at once, then one a minute.
        assertThat(lines).containsExactly("storing failed (OOM); trying again",
                "storing failed (OOM); trying again (19 similar lines suppressed)",
                "storing failed (OOM); trying again (59 similar lines suppressed)");
    }

    @Test
    void perSecondLetsThatManyThroughEachSecond() {
        RateLimitedLog log = new RateLimitedLog(lines::add, 2, Duration.ofSeconds(1), now::get);
        for (int i = 0; i < 5; i++) {
            log.info("line %d", i);
        }
        now.addAndGet(1_000);
        log.info("line %d", 5);
        assertThat(lines).containsExactly("line 0", "line 1", "line 5 (3 similar lines suppressed)");
    }
}
