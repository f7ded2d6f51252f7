package io.tbmq.broker.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tbmq.broker.metrics.BrokerMetrics;

class ConnectionLimiterTest {
    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    private EmbeddedChannel connect(ConnectionLimiter limiter) {
        EmbeddedChannel ch = new EmbeddedChannel(limiter);
        channels.add(ch);
        return ch;
    }

    private double shed(String reason) {
        var c = registry.find("tbmq.connections.shed").tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void aBurstBeyondOneSecondsWorthIsClosedAndThePaceResumes() {
        ConnectionLimiter limiter = new ConnectionLimiter("tcp", 100, 3, new BrokerMetrics(registry), now::get);
        assertThat(List.of(connect(limiter), connect(limiter), connect(limiter))).allMatch(EmbeddedChannel::isOpen);
        assertThat(connect(limiter).isOpen()).isFalse();
        assertThat(shed("rate")).isEqualTo(1);

        now.addAndGet(340_000_000L); // a third of a second: one more
        assertThat(connect(limiter).isOpen()).isTrue();
        assertThat(connect(limiter).isOpen()).isFalse();
        now.addAndGet(60_000_000_000L); // idle for a minute: the bucket holds one second's worth, no more
        assertThat(List.of(connect(limiter), connect(limiter), connect(limiter))).allMatch(EmbeddedChannel::isOpen);
        assertThat(connect(limiter).isOpen()).isFalse();
    }

    @Test
    void connectionsRefusedByRateDoNotFreeSlotsOfTheConnectionLimit() {
        ConnectionLimiter limiter = new ConnectionLimiter("tcp", 2, 2, new BrokerMetrics(registry), now::get);
        EmbeddedChannel first = connect(limiter);
        connect(limiter);
        assertThat(connect(limiter).isOpen()).as("over the rate").isFalse();
        now.addAndGet(10_000_000_000L);
        assertThat(connect(limiter).isOpen()).as("over the limit").isFalse();
        assertThat(shed("limit")).isEqualTo(1);
        first.close();
        now.addAndGet(10_000_000_000L);
        assertThat(connect(limiter).isOpen()).as("a slot was freed").isTrue();
        assertThat(connect(limiter).isOpen()).as("full again").isFalse();
    }

    @Test
    void zeroRateMeansNoRateLimit() {
        ConnectionLimiter limiter = new ConnectionLimiter("tcp", 1000, 0, new BrokerMetrics(registry), now::get);
        for (int i = 0; i < 500; i++) {
            assertThat(connect(limiter).isOpen()).isTrue();
        }
    }

    @Test
    void newLimitsApplyToTheNextConnectionsAndLeaveOpenOnesAlone() {
        ConnectionLimiter limiter = new ConnectionLimiter("tcp", 3, 0, new BrokerMetrics(registry), now::get);
        List<EmbeddedChannel> open = List.of(connect(limiter), connect(limiter), connect(limiter));
        limiter.maxConnections(1);
        assertThat(open).as("already open above the new limit").allMatch(EmbeddedChannel::isOpen);
        assertThat(connect(limiter).isOpen()).isFalse();
        limiter.maxConnections(10);
        assertThat(connect(limiter).isOpen()).isTrue();

        limiter.maxConnectionRate(1);
        assertThat(connect(limiter).isOpen()).as("within the first second's token").isTrue();
        assertThat(connect(limiter).isOpen()).as("over the new rate").isFalse();
        limiter.maxConnectionRate(0);
        assertThat(connect(limiter).isOpen()).as("no rate limit again").isTrue();
    }
}
