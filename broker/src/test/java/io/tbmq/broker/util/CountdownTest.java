package io.tbmq.broker.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class CountdownTest {

    @Test
    void returnsOnceTheCountReachesZero() {
        AtomicInteger left = new AtomicInteger(3);
        long start = System.nanoTime();
        assertThat(Countdown.awaitZero(left::decrementAndGet, Duration.ofMinutes(1))).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void givesUpAtTheTimeoutWithWhatIsLeft() {
        assertThat(Countdown.awaitZero(() -> 7, Duration.ofMillis(50))).isEqualTo(7);
        assertThat(Countdown.awaitZero(() -> 7, Duration.ZERO)).as("looked at once").isEqualTo(7);
    }
}
