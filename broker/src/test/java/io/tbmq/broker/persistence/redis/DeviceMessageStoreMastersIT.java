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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
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
        // A batch larger than any test's commands: what is sent goes with the store's own flushes. A flush
        // interval far longer than a test's loop of acknowledgements: with 1 ms a loaded machine split them
        // between the timed flush and the test's own, two calls per master where the test counts one.
        connector = new RedisConnector(TestRedisConfig.cluster(cluster.addresses(), 1000, Duration.ofHours(1))
                .withFlushInterval(Duration.ofSeconds(2)), ScriptTimer.NONE, Duration.ofHours(1));
        store = new DeviceMessageStore(connector, KEYS, 1000, true);
        warmScripts(1);
    }

    /** Every master loads the scripts once (a NOSCRIPT answer costs an EVAL), so that the tests count only their calls. */
    private static void warmScripts(long offset) throws Exception {
        Map<String, List<DeviceMessageStore.Incoming>> warm = batch("warm-", offset);
        store.add(warm, c -> false).get(10, TimeUnit.SECONDS).forEach((client, assigned) -> {
            for (int packetId : packetIds(assigned)) {
                store.acknowledge(client, packetId);
            }
        });
        store.flushAcks();
        for (String client : warm.keySet()) {
            awaitZcard(client, 0);
        }
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
    void aSlowCallToOneMasterIsLoggedWithThatMaster() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(RedisConnector.class.getName());
        log.addHandler(capture);
        RedisNode master = cluster.nodes().get(0);
        try {
            CompletableFuture<?> stored;
            master.process().suspend();
            try {
                stored = store.add(batch("slow-", 1), c -> false);
                Thread.sleep(1_500);
            } finally {
                master.process().resume();
            }
            stored.get(10, TimeUnit.SECONDS);
            // Logged as the call completes, possibly just after the caller heard of it.
            String named = "script add on .+:" + master.port() + " took \\d+ ms";
            Awaitility.await().atMost(5, TimeUnit.SECONDS).untilAsserted(() -> assertThat(lines)
                    .as("the log names the master that was slow").anyMatch(l -> l.matches(named)));
        } finally {
            log.removeHandler(capture);
        }
    }

    @Test
    void aMasterThatStopsServingWhileAnotherIsDownIsNamed() throws Exception {
        assertThat(connector.mastersRequiringFullCoverage().get(10, TimeUnit.SECONDS)).as("the stack runs with coverage not required")
                .isEmpty();
        RedisNode master = cluster.nodes().get(1);
        RedisCli.command(master.port(), "CONFIG SET cluster-require-full-coverage yes");
        try {
            assertThat(connector.mastersRequiringFullCoverage().get(10, TimeUnit.SECONDS))
                    .containsExactly(master.address());
        } finally {
            RedisCli.command(master.port(), "CONFIG SET cluster-require-full-coverage no");
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
    void aLoadAfterTheMastersLostTheirScriptsWaitsForTheClientsRemovalSentAgainAfterNoscript() throws Exception {
        String client = "noscript";
        assertThat(packetIds(store.add(Map.of(client, List.of(incoming(1, "a"), incoming(2, "b"))), c -> false)
                .get(10, TimeUnit.SECONDS).get(client))).containsExactly(1, 2);
        try {
            // As after a failover to a replica: no script cached, until a load caches load.lua again.
            cluster.nodes().forEach(n -> assertThat(RedisCli.command(n.port(), "SCRIPT FLUSH")).contains("OK"));
            assertThat(store.load(client).get(10, TimeUnit.SECONDS).entries()).hasSize(2);

            // The removal gets NOSCRIPT on the client's master and goes again as EVAL, after the load's EVALSHA.
            store.acknowledge(client, 1);
            assertThat(store.load(client).get(10, TimeUnit.SECONDS).entries()).extracting(DeviceMessageStore.Entry::packetId)
                    .as("what the session loads: not the message it acknowledged").containsExactly(2);
        } finally {
            warmScripts(1_000);
        }
    }

    @Test
    void aLoadWaitsForTheRemovalSentAnewToTheClientsNewMasterWhereItGetsNoscript() throws Exception {
        String client = "slot-mover";
        int slot = slotOf(client);
        for (String prefix : List.of("warm-", "slow-", "many-", "moved-")) {
            // The slot moves and back: a client of another test there could be counted in an extra call.
            assertThat(batch(prefix, 1).keySet()).as("clients of the other tests").noneMatch(c -> slotOf(c) == slot);
        }
        assertThat(packetIds(store.add(Map.of(client, List.of(incoming(1, "a"), incoming(2, "b"))), c -> false)
                .get(10, TimeUnit.SECONDS).get(client))).containsExactly(1, 2);
        RedisNode source = owner(slot);
        RedisNode target = cluster.nodes().stream().filter(n -> n != source).findFirst().orElseThrow();
        try {
            move(slot, source, target);
            // As a master just added by a scale-up: load.lua cached by another client's load, remove.lua not yet.
            assertThat(RedisCli.command(target.port(), "SCRIPT FLUSH")).contains("OK");
            cache(target, LuaScript.load("load"));
            resetStats();

            // The removal goes to the old master, which leaves the client out; sent anew, Redis redirects it to
            // the new one, where it gets NOSCRIPT and goes again as EVAL: the load waits for that one too.
            store.acknowledge(client, 1);
            assertThat(store.load(client).get(10, TimeUnit.SECONDS).entries()).extracting(DeviceMessageStore.Entry::packetId)
                    .as("what the session loads: not the message it acknowledged").containsExactly(2);
            assertThat(scriptStat(source, "calls")).as("the old master ran the removal that left the client out").isEqualTo(1);
            assertThat(scriptStat(target, "calls")).as("the new one: the removal's EVALSHA and EVAL, and the load").isEqualTo(3);
            assertThat(scriptStat(target, "failed_calls")).as("NOSCRIPT").isEqualTo(1);
        } finally {
            move(slot, target, source);
            // The connector may have learned the move from a redirect (at most one refresh a second): it routes there again.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!routesTo(client, source) && System.nanoTime() < deadline) {
                Thread.sleep(1100);
                store.load(client).get(10, TimeUnit.SECONDS);
            }
            awaitConnectorSees(client, source);
            warmScripts(2_000);
        }
    }

    @Test
    void aClientWhoseSlotMovedUnseenIsLeftOutOfItsOldMastersCallAndStoredAndAcknowledgedOnItsNewOne() throws Exception {
        Map<String, List<DeviceMessageStore.Incoming>> first = batch("moved-", 200);
        store.add(first, c -> false).get(10, TimeUnit.SECONDS);
        // Neither first nor last of its master's clients: the call's other clients come before and after it.
        String mover = "moved-" + (CLIENTS / 2);
        int slot = slotOf(mover);
        RedisNode source = owner(slot);
        List<String> sameMaster = first.keySet().stream().filter(c -> owner(slotOf(c)) == source).toList();
        assertThat(sameMaster.indexOf(mover)).isBetween(1, sameMaster.size() - 2);
        RedisNode target = cluster.nodes().stream().filter(n -> n != source).findFirst().orElseThrow();
        move(slot, source, target);

        // The broker still sends the mover with the clients of its old master, which leaves it out.
        Map<String, List<DeviceMessageStore.Incoming>> second = batch("moved-", 300);
        resetStats();
        Map<String, List<DeviceMessageStore.Assigned>> assigned = store.add(second, c -> false).get(10, TimeUnit.SECONDS);

        assertThat(assigned).hasSize(CLIENTS);
        assigned.forEach((client, a) -> assertThat(packetIds(a)).as(client).containsExactly(3, 4));
        assertThat(scriptCalls()).as("a call per master, then the mover's own on its new master").isEqualTo(4);
        assertThat(failedScriptCalls()).as("no call failed half-way").isZero();
        assertThat(integer(RedisCli.command(target.port(), "ZCARD " + key(KEYS.messages(mover))))).as("all four on the new master")
                .isEqualTo(4);

        // Lettuce learns the move from the redirect; the slot then moves back, unseen again.
        awaitConnectorSees(mover, target);
        move(slot, target, source);

        resetStats();
        for (String client : second.keySet()) {
            for (int id = 1; id <= 4; id++) {
                store.acknowledge(client, id);
            }
        }
        store.flushAcks();
        for (String client : second.keySet()) {
            awaitZcard(client, 0);
        }
        assertThat(scriptCalls()).as("a remove per master, then the mover's own").isEqualTo(4);
        assertThat(failedScriptCalls()).isZero();
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

    /** Loads a script into one node's cache, as a call of it there would. */
    private static void cache(RedisNode node, LuaScript script) {
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", node.port()));
        try (var connection = client.connect()) {
            assertThat(connection.sync().scriptLoad(script.body())).isEqualTo(script.sha());
        } finally {
            client.shutdown();
        }
    }

    /** Waits until the connector routes the client's keys to {@code master} (Lettuce learns a move from a redirect). */
    private static void awaitConnectorSees(String client, RedisNode master) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!routesTo(client, master) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(connector.masterOf(KEYS.messages(client))).extracting(RedisConnector.Master::port).isEqualTo(master.port());
    }

    /** Whether the connector routes the client's keys to {@code master} (null while it is still learning the topology). */
    private static boolean routesTo(String client, RedisNode master) {
        RedisConnector.Master routed = connector.masterOf(KEYS.messages(client));
        return routed != null && routed.port() == master.port();
    }

    private static int slotOf(String client) {
        return ClusterReplies.slot(cluster.nodes().get(0), KEYS.messages(client));
    }

    private static void resetStats() {
        cluster.nodes().forEach(n -> assertThat(RedisCli.command(n.port(), "CONFIG RESETSTAT")).contains("OK"));
    }

    /** EVALSHA and EVAL calls on all masters since the last reset (a redirected one is rejected, not called). */
    private static long scriptCalls() {
        return scriptStat("calls");
    }

    /** Script calls that raised an error while running. */
    private static long failedScriptCalls() {
        return scriptStat("failed_calls");
    }

    private static long scriptStat(String field) {
        return cluster.nodes().stream().mapToLong(n -> scriptStat(n, field)).sum();
    }

    /** On one node: EVALSHA and EVAL calls since the last reset (or those that raised an error, with "failed_calls"). */
    private static long scriptStat(RedisNode node, String field) {
        long total = 0;
        Matcher m = Pattern.compile("cmdstat_(evalsha|eval):.*?\\b" + field + "=(\\d+)").matcher(RedisCli.command(node.port(), "INFO commandstats"));
        while (m.find()) {
            total += Long.parseLong(m.group(2));
        }
        return total;
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
