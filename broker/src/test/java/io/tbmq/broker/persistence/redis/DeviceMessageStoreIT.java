package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.tbmq.localstack.RedisNode;

/** The DEVICE message store's replay protection on a real redis-server. */
class DeviceMessageStoreIT {
    static RedisNode redis;
    static RedisConnector connector;
    static DeviceMessageStore store;

    @BeforeAll
    static void start() throws Exception {
        redis = RedisNode.standalone(Files.createTempDirectory(Path.of("target").toAbsolutePath(), "store-it"), false).start(Duration.ofSeconds(30));
        connector = new RedisConnector(TestRedisConfig.standalone(redis.address(), Duration.ofSeconds(5)));
        store = new DeviceMessageStore(connector, new RedisKeys(0), 1000);
    }

    @AfterAll
    static void stop() {
        if (connector != null) {
            connector.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aReplayIsSkippedButOlderMessagesArrivingThroughAnotherPersistedPartitionAreStored() throws Exception {
        // Source partition 5, offsets 10 and 11, read through persisted partition 9 (a replay of offset 10 too).
        assertThat(packetIds(add("c1", new DeviceMessageStore.Incoming(5, 9, 10, 60, bytes("a")),
                new DeviceMessageStore.Incoming(5, 9, 11, 60, bytes("b"))))).containsExactly(1, 2);
        assertThat(packetIds(add("c1", new DeviceMessageStore.Incoming(5, 9, 10, 60, bytes("a"))))).as("a replay").containsExactly(0);

        // Partitions added: the client's key now maps to persisted partition 1, which is read first and
        // carries newer source offsets; the older ones still queued in partition 9 arrive afterwards.
        assertThat(packetIds(add("c2", new DeviceMessageStore.Incoming(5, 1, 20, 60, bytes("new"))))).containsExactly(1);
        assertThat(packetIds(add("c2", new DeviceMessageStore.Incoming(5, 9, 15, 60, bytes("old"))))).as("not a replay: stored")
                .containsExactly(2);
        assertThat(packetIds(add("c2", new DeviceMessageStore.Incoming(5, 9, 15, 60, bytes("old"))))).as("its replay").containsExactly(0);
    }

    private static List<DeviceMessageStore.Assigned> add(String client, DeviceMessageStore.Incoming... messages) throws Exception {
        return store.add(Map.of(client, List.of(messages)), c -> false).get().get(client);
    }

    private static List<Integer> packetIds(List<DeviceMessageStore.Assigned> assigned) {
        return assigned.stream().map(DeviceMessageStore.Assigned::packetId).toList();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
