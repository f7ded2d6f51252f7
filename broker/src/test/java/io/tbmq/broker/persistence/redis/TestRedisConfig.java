package io.tbmq.broker.persistence.redis;

import java.time.Duration;
import java.util.Optional;

import io.tbmq.broker.config.RedisConfig;

/** A Redis configuration for the tests' redis-servers: no password, what is buffered flushed after 1 ms unless told otherwise. */
public record TestRedisConfig(String mode, String nodes, int lettuceBatchSize, Duration commandTimeout,
        Duration topologyRefreshInterval, Duration connectTimeout, Duration flushInterval) implements RedisConfig {

    public static TestRedisConfig standalone(String address, Duration commandTimeout) {
        return new TestRedisConfig("standalone", address, 1, commandTimeout, Duration.ofSeconds(5), Duration.ofSeconds(2),
                Duration.ofMillis(1));
    }

    public static TestRedisConfig cluster(String addresses, int batchSize, Duration topologyRefresh) {
        return new TestRedisConfig("cluster", addresses, batchSize, Duration.ofSeconds(5), topologyRefresh, Duration.ofSeconds(2),
                Duration.ofMillis(1));
    }

    /** The same, with what gathers within {@code interval} sent together (a test that counts calls per batch). */
    public TestRedisConfig withFlushInterval(Duration interval) {
        return new TestRedisConfig(mode, nodes, lettuceBatchSize, commandTimeout, topologyRefreshInterval, connectTimeout, interval);
    }

    @Override
    public Optional<String> password() {
        return Optional.empty();
    }

    @Override
    public int slotGroups() {
        return 0;
    }

    @Override
    public boolean callsPerMaster() {
        return true;
    }

    @Override
    public Duration memoryCheckInterval() {
        return Duration.ZERO;
    }
}
