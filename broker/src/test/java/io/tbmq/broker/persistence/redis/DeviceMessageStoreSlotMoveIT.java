package io.tbmq.broker.persistence.redis;

import static io.tbmq.broker.persistence.redis.ClusterReplies.bulk;
import static io.tbmq.broker.persistence.redis.ClusterReplies.incoming;
import static io.tbmq.broker.persistence.redis.ClusterReplies.integer;
import static io.tbmq.broker.persistence.redis.ClusterReplies.packetIds;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.config.RedisConfig;
import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisCluster;
import io.tbmq.localstack.RedisNode;

/**
 * The DEVICE message store while the operator moves a client's slot between masters, on a real
 * three-master Redis Cluster: Redis refuses the store's script while the slot is open (the script
 * creates a key the source no longer may), and the store runs it again until the slot is closed
 * instead of failing the whole batch of the persisted consumer, which would then be retried with
 * every other client's messages in it (seen on a real node during a scale-up).
 */
class DeviceMessageStoreSlotMoveIT {
    static RedisCluster cluster;
    static RedisConnector connector;
    static DeviceMessageStore store;
    static final RedisKeys KEYS = new RedisKeys(0);

    @BeforeAll
    static void start() throws Exception {
        cluster = new RedisCluster(Files.createTempDirectory(Path.of("target").toAbsolutePath(), "slot-move-it"), 3, false)
                .start(Duration.ofSeconds(30));
        connector = new RedisConnector(config(1, Duration.ofSeconds(5)));
        store = new DeviceMessageStore(connector, KEYS, 1000);
    }

    static RedisConfig config(int batchSize, Duration topologyRefresh) {
        return TestRedisConfig.cluster(cluster.addresses(), batchSize, topologyRefresh);
    }

    @AfterAll
    static void stop() {
        if (connector != null) {
            connector.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aMessageStoredWhileItsClientsSlotIsOpenIsStoredOnceTheSlotCloses() throws Exception {
        String client = "slot-mover";
        assertThat(packetIds(store.add(Map.of(client, List.of(incoming(10, "before"))), c -> false).get(10, TimeUnit.SECONDS)
                .get(client))).containsExactly(1);

        int slot = (int) integer(RedisCli.command(cluster.nodes().get(0).port(),
                "CLUSTER KEYSLOT " + new String(KEYS.messages(client), StandardCharsets.UTF_8)));
        RedisNode source = owner(slot);
        RedisNode target = cluster.nodes().stream().filter(n -> n != source).findFirst().orElseThrow();
        String sourceId = bulk(RedisCli.command(source.port(), "CLUSTER MYID"));
        String targetId = bulk(RedisCli.command(target.port(), "CLUSTER MYID"));
        assertThat(RedisCli.command(target.port(), "CLUSTER SETSLOT " + slot + " IMPORTING " + sourceId)).contains("OK");
        assertThat(RedisCli.command(source.port(), "CLUSTER SETSLOT " + slot + " MIGRATING " + targetId)).contains("OK");

        CompletableFuture<Map<String, List<DeviceMessageStore.Assigned>>> during = store.add(
                Map.of(client, List.of(incoming(11, "during"))), c -> false);
        Thread.sleep(1_000);
        assertThat(during).as("held back while the slot is open, not failed").isNotDone();

        // The move is called off (as an operator restarted mid-move may leave it, until it resumes).
        assertThat(RedisCli.command(source.port(), "CLUSTER SETSLOT " + slot + " STABLE")).contains("OK");
        assertThat(RedisCli.command(target.port(), "CLUSTER SETSLOT " + slot + " STABLE")).contains("OK");
        assertThat(packetIds(during.get(10, TimeUnit.SECONDS).get(client))).as("stored once the slot closed").containsExactly(2);
        assertThat(integer(RedisCli.command(source.port(), "ZCARD " + new String(KEYS.messages(client), StandardCharsets.UTF_8))))
                .as("both messages kept, each once").isEqualTo(2);
    }

    /**
     * A slot half moved (its keys on the new master, the slot still MIGRATING): Redis answers ASK and
     * Lettuce sends the script again to the new master by itself. That second send is not one of
     * the connector's, so no batch counts it; seen on a real node, a broker with no client traffic
     * (new in a scale-up) had every such script wait for its next health check, 2 s per batch.
     */
    @Test
    void aScriptRedirectedWhileItsSlotMovesIsSentWithoutWaitingForOtherTraffic() throws Exception {
        // A batch nothing else fills, no health check during the test, no periodic topology refresh.
        try (RedisConnector quiet = new RedisConnector(config(100, Duration.ofHours(1)), ScriptTimer.NONE, Duration.ofHours(1))) {
            // One call per client (tbmq.redis.calls-per-master=false): that path is what a moving slot falls back to anyway.
            DeviceMessageStore quietStore = new DeviceMessageStore(quiet, KEYS, 1000, false);
            String client = "redirected";
            assertThat(packetIds(quietStore.add(Map.of(client, List.of(incoming(10, "before"))), c -> false)
                    .get(10, TimeUnit.SECONDS).get(client))).containsExactly(1);

            int slot = (int) integer(RedisCli.command(cluster.nodes().get(0).port(),
                    "CLUSTER KEYSLOT " + new String(KEYS.messages(client), StandardCharsets.UTF_8)));
            RedisNode source = owner(slot);
            RedisNode target = cluster.nodes().stream().filter(n -> n != source).findFirst().orElseThrow();
            String sourceId = bulk(RedisCli.command(source.port(), "CLUSTER MYID"));
            String targetId = bulk(RedisCli.command(target.port(), "CLUSTER MYID"));
            assertThat(RedisCli.command(target.port(), "CLUSTER SETSLOT " + slot + " IMPORTING " + sourceId)).contains("OK");
            assertThat(RedisCli.command(source.port(), "CLUSTER SETSLOT " + slot + " MIGRATING " + targetId)).contains("OK");
            String keys = RedisCli.command(source.port(), "CLUSTER GETKEYSINSLOT " + slot + " 100");
            for (String line : keys.split("\\r\\n")) {
                if (!line.isEmpty() && !line.startsWith("*") && !line.startsWith("$")) {
                    assertThat(RedisCli.command(source.port(), "MIGRATE 127.0.0.1 " + target.port() + " " + line + " 0 5000"))
                            .contains("OK");
                }
            }

            CompletableFuture<Map<String, List<DeviceMessageStore.Assigned>>> after = quietStore.add(
                    Map.of(client, List.of(incoming(11, "after"))), c -> false);
            Thread.sleep(300);
            for (RedisNode n : cluster.nodes()) {
                assertThat(RedisCli.command(n.port(), "CLUSTER SETSLOT " + slot + " NODE " + targetId)).contains("OK");
            }
            // Within the 5 s command timeout: a redirected script never flushed would only time out.
            assertThat(packetIds(after.get(4, TimeUnit.SECONDS).get(client))).as("stored on the new owner").containsExactly(2);
            assertThat(integer(RedisCli.command(target.port(), "ZCARD " + new String(KEYS.messages(client), StandardCharsets.UTF_8))))
                    .isEqualTo(2);
        }
    }

    private static RedisNode owner(int slot) {
        return ClusterReplies.owner(cluster.nodes(), slot);
    }
}
