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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisCluster;
import io.tbmq.localstack.RedisNode;

/**
 * One script call per master on a real three-master Redis Cluster: a batch of many clients costs
 * a call per master instead of one per client, and a client whose slot moved without the broker
 * knowing (its topology is read once an hour here) is still stored and acknowledged, on its new
 * master, with nothing lost or stored twice.
 */
class DeviceMessageStoreMastersIT {
    static RedisCluster cluster;
    static RedisConnector connector;
    static DeviceMessageStore store;
    static final RedisKeys KEYS = new RedisKeys(0);
    static final int CLIENTS = 60;

    @BeforeAll
    static void start() throws Exception {
        cluster = new RedisCluster(Files.createTempDirectory(Path.of("target").toAbsolutePath(), "masters-it"), 3, false)
                .start(Duration.ofSeconds(30));
        // A batch larger than any test's commands: what is sent goes with the store's own flushes.
        connector = new RedisConnector(TestRedisConfig.cluster(cluster.addresses(), 1000, Duration.ofHours(1)), ScriptTimer.NONE,
                Duration.ofHours(1));
        store = new DeviceMessageStore(connector, KEYS, 1000, true);
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
    void aBatchOfManyClientsIsOneCallPerMasterAndItsAcknowledgementsToo() throws Exception {
        Map<String, List<DeviceMessageStore.Incoming>> batch = batch("many-", 100);
        resetStats();

        Map<String, List<DeviceMessageStore.Assigned>> assigned = store.add(batch, c -> false).get(10, TimeUnit.SECONDS);

        assertThat(assigned).hasSize(CLIENTS);
        assigned.values().forEach(a -> assertThat(packetIds(a)).containsExactly(1, 2));
        assertThat(scriptCalls()).as("one add.lua per master, not one per client").isEqualTo(3);
        for (String client : batch.keySet()) {
            assertThat(zcard(client)).isEqualTo(2);
        }

        resetStats();
        for (String client : batch.keySet()) {
            store.acknowledge(client, 1);
            store.acknowledge(client, 2);
        }
        store.flushAcks();
        for (String client : batch.keySet()) {
            awaitZcard(client, 0);
        }
        assertThat(scriptCalls()).as("one remove.lua per master").isEqualTo(3);
    }

    @Test
    void aClientWhoseSlotMovedUnseenIsStoredAndAcknowledgedOnItsNewMaster() throws Exception {
        Map<String, List<DeviceMessageStore.Incoming>> first = batch("moved-", 200);
        store.add(first, c -> false).get(10, TimeUnit.SECONDS);
        String mover = first.keySet().iterator().next();
        int slot = slotOf(mover);
        RedisNode source = owner(slot);
        RedisNode target = cluster.nodes().stream().filter(n -> n != source).findFirst().orElseThrow();
        move(slot, source, target);

        // The broker still sends the mover with the clients of its old master; that master leaves it out.
        Map<String, List<DeviceMessageStore.Incoming>> second = batch("moved-", 300);
        Map<String, List<DeviceMessageStore.Assigned>> assigned = store.add(second, c -> false).get(10, TimeUnit.SECONDS);

        assertThat(assigned).hasSize(CLIENTS);
        assigned.forEach((client, a) -> assertThat(packetIds(a)).as(client).containsExactly(3, 4));
        assertThat(integer(RedisCli.command(target.port(), "ZCARD " + key(KEYS.messages(mover))))).as("all four on the new master")
                .isEqualTo(4);
        assertThat(integer(RedisCli.command(source.port(), "DBSIZE"))).as("nothing of the mover left behind")
                .isEqualTo(keysOn(source, first.keySet(), mover));

        for (String client : second.keySet()) {
            for (int id = 1; id <= 4; id++) {
                store.acknowledge(client, id);
            }
        }
        store.flushAcks();
        for (String client : second.keySet()) {
            awaitZcard(client, 0);
        }
    }

    /** CLIENTS clients with two messages each, from source offsets {@code offset} and {@code offset + 1}. */
    private static Map<String, List<DeviceMessageStore.Incoming>> batch(String prefix, long offset) {
        Map<String, List<DeviceMessageStore.Incoming>> batch = new LinkedHashMap<>();
        for (int i = 0; i < CLIENTS; i++) {
            batch.put(prefix + i, List.of(incoming(offset, "a"), incoming(offset + 1, "b")));
        }
        return batch;
    }

    /** Moves a slot and its keys to {@code target}, telling every master but not the connector. */
    private static void move(int slot, RedisNode source, RedisNode target) {
        String sourceId = bulk(RedisCli.command(source.port(), "CLUSTER MYID"));
        String targetId = bulk(RedisCli.command(target.port(), "CLUSTER MYID"));
        assertThat(RedisCli.command(target.port(), "CLUSTER SETSLOT " + slot + " IMPORTING " + sourceId)).contains("OK");
        assertThat(RedisCli.command(source.port(), "CLUSTER SETSLOT " + slot + " MIGRATING " + targetId)).contains("OK");
        for (String line : RedisCli.command(source.port(), "CLUSTER GETKEYSINSLOT " + slot + " 100").split("\\r\\n")) {
            if (!line.isEmpty() && !line.startsWith("*") && !line.startsWith("$")) {
                assertThat(RedisCli.command(source.port(), "MIGRATE 127.0.0.1 " + target.port() + " " + line + " 0 5000")).contains("OK");
            }
        }
        for (RedisNode n : cluster.nodes()) {
            assertThat(RedisCli.command(n.port(), "CLUSTER SETSLOT " + slot + " NODE " + targetId)).contains("OK");
        }
    }

    /** The keys the clients of {@code clients} other than {@code except} keep on {@code node}: three per client it serves. */
    private static long keysOn(RedisNode node, Iterable<String> clients, String except) {
        long keys = 0;
        for (String client : clients) {
            if (!client.equals(except) && owner(slotOf(client)) == node) {
                keys += 1 + 1 + 2 + 2; // messages zset, state hash, two message strings of each batch
            }
        }
        return keys;
    }

    private static int slotOf(String client) {
        return ClusterReplies.slot(cluster.nodes().get(0), KEYS.messages(client));
    }

    private static void resetStats() {
        cluster.nodes().forEach(n -> assertThat(RedisCli.command(n.port(), "CONFIG RESETSTAT")).contains("OK"));
    }

    /** EVALSHA and EVAL calls on all masters since the last reset. */
    private static long scriptCalls() {
        long calls = 0;
        Pattern p = Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)");
        for (RedisNode n : cluster.nodes()) {
            Matcher m = p.matcher(RedisCli.command(n.port(), "INFO commandstats"));
            while (m.find()) {
                calls += Long.parseLong(m.group(2));
            }
        }
        return calls;
    }

    private static long zcard(String client) {
        return integer(RedisCli.command(owner(slotOf(client)).port(), "ZCARD " + key(KEYS.messages(client))));
    }

    private static void awaitZcard(String client, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (zcard(client) != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(zcard(client)).as(client).isEqualTo(expected);
    }

    private static RedisNode owner(int slot) {
        return ClusterReplies.owner(cluster.nodes(), slot);
    }

    private static String key(byte[] key) {
        return new String(key, StandardCharsets.UTF_8);
    }
}
