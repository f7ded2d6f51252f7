package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class ConnectTimeoutTest {

    @Test
    void aTimeoutNettyWouldReadAsNoneIsRefusedByName() {
        assertThatThrownBy(() -> RedisConnector.checkedConnectTimeout(withConnectTimeout(Duration.ofNanos(500_000))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tbmq.redis.connect-timeout");
        assertThatThrownBy(() -> RedisConnector.checkedConnectTimeout(withConnectTimeout(Duration.ZERO)))
                .hasMessageContaining("at least 1ms");
    }

    @Test
    void theDefaultIsTaken() {
        assertThat(RedisConnector.checkedConnectTimeout(withConnectTimeout(Duration.ofSeconds(2)))).isEqualTo(Duration.ofSeconds(2));
    }

    private static TestRedisConfig withConnectTimeout(Duration connect) {
        return new TestRedisConfig("standalone", "127.0.0.1:6379", 1, Duration.ofSeconds(5), Duration.ofSeconds(5), connect,
                Duration.ofMillis(1));
    }
}
