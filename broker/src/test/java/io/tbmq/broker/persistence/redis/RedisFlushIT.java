package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.config.RedisConfig;
import io.tbmq.localstack.RedisNode;

/**
 * When buffered commands reach a real redis-server: a poll's writes and a session's load go out at
 * once, and gathered acknowledgements one flush interval after the first of them.
 */
class RedisFlushIT {
    static final Duration LONG_INTERVAL = Duration.ofSeconds(20);
    static RedisNode redis;

    @BeforeAll
    static void start() throws Exception {
        redis = RedisNode.standalone(Files.createTempDirectory(Path.of("target").toAbsolutePath(), "flush-it"), false)
                .start(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aPollsWritesAndALoadDoNotWaitForTheFlushInterval() throws Exception {
        try (RedisConnector connector = new RedisConnector(config(LONG_INTERVAL))) {
            DeviceMessageStore store = new DeviceMessageStore(connector, new RedisKeys(0), 1000);
            // Far less than the 20 s interval: written when submitted, not when the timer fires.
            List<DeviceMessageStore.Assigned> stored = store.add(Map.of("w1", List.of(incoming(1, "a"), incoming(2, "b"))), c -> false)
                    .get(5, TimeUnit.SECONDS).get("w1");
            assertThat(stored).extracting(DeviceMessageStore.Assigned::packetId).containsExactly(1, 2);
            assertThat(store.load("w1").get(5, TimeUnit.SECONDS).entries()).hasSize(2);
        }
    }

    @Test
    void acknowledgementsGoOutOneFlushIntervalAfterTheFirst() throws Exception {
        Duration interval = Duration.ofSeconds(2);
        try (RedisConnector connector = new RedisConnector(config(interval));
                RedisConnector reader = new RedisConnector(config(LONG_INTERVAL))) {
            DeviceMessageStore store = new DeviceMessageStore(connector, new RedisKeys(0), 1000);
            // Another store on its own connection sees only what reached Redis (it has no acknowledgements to send first).
            DeviceMessageStore observer = new DeviceMessageStore(reader, new RedisKeys(0), 1000);
            store.add(Map.of("a1", List.of(incoming(1, "a"), incoming(2, "b"), incoming(3, "c"))), c -> true).get(5, TimeUnit.SECONDS);

            store.acknowledge("a1", 1);
            store.acknowledge("a1", 2);
            assertThat(observer.load("a1").get(5, TimeUnit.SECONDS).entries()).as("gathered, not sent yet").hasSize(3);
            assertThat(remainingWithin(observer, "a1", 1, Duration.ofSeconds(15))).as("sent after the interval, together")
                    .containsExactly(3);

            // Quiet since: the next acknowledgement starts a new interval of its own.
            Thread.sleep(interval.toMillis() * 2);
            store.acknowledge("a1", 3);
            assertThat(remainingWithin(observer, "a1", 0, Duration.ofSeconds(15))).isEmpty();
        }
    }

    private static List<Integer> remainingWithin(DeviceMessageStore observer, String client, int expected, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        List<Integer> ids;
        do {
            Thread.sleep(100);
            ids = observer.load(client).get(5, TimeUnit.SECONDS).entries().stream().map(DeviceMessageStore.Entry::packetId).toList();
        } while (ids.size() != expected && System.nanoTime() < deadline);
        return ids;
    }

    private static DeviceMessageStore.Incoming incoming(long offset, String value) {
        return new DeviceMessageStore.Incoming(0, 0, offset, 60, value.getBytes(StandardCharsets.UTF_8));
    }

    /** Batches larger than any test fills, so only the interval or an explicit flush sends. */
    private static RedisConfig config(Duration flushInterval) {
        return new RedisConfig() {
            public String mode() {
                return "standalone";
            }

            public String nodes() {
                return redis.address();
            }

            public Optional<String> password() {
                return Optional.empty();
            }

            public int lettuceBatchSize() {
                return 1000;
            }

            public Duration flushInterval() {
                return flushInterval;
            }

            public Duration commandTimeout() {
                return Duration.ofSeconds(30);
            }

            public Duration topologyRefreshInterval() {
                return Duration.ofSeconds(5);
            }

            @Override
            public Duration memoryCheckInterval() {
                return Duration.ZERO;
            }

            public Duration connectTimeout() {
                return Duration.ofSeconds(2);
            }

            public int slotGroups() {
                return 0;
            }

            @Override
            public boolean callsPerMaster() {
                return true;
            }
        };
    }
}
