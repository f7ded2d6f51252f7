package io.tbmq.broker.persistence.redis;

import java.time.Duration;
import java.util.Optional;

import io.tbmq.broker.config.RedisConfig;

/** A Redis configuration for the tests' redis-servers: no password, every command flushed at once. */
public record TestRedisConfig(String mode, String nodes, int lettuceBatchSize, Duration commandTimeout,
        Duration topologyRefreshInterval, Duration connectTimeout) implements RedisConfig {

    public static TestRedisConfig standalone(String address, Duration commandTimeout) {
        return new TestRedisConfig("standalone", address, 1, commandTimeout, Duration.ofSeconds(5), Duration.ofSeconds(2));
    }

    public static TestRedisConfig cluster(String addresses, int batchSize, Duration topologyRefresh) {
        return new TestRedisConfig("cluster", addresses, batchSize, Duration.ofSeconds(5), topologyRefresh, Duration.ofSeconds(2));
    }

    @Override
    public Optional<String> password() {
        return Optional.empty();
    }

    @Override
    public Duration flushInterval() {
        return Duration.ofMillis(1);
    }

    @Override
    public int slotGroups() {
        return 0;
    }

    @Override
    public boolean callsPerMaster() {
        return true;
    }
}
