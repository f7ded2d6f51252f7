package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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

/** The DEVICE message store on a real redis-server: replay protection, the limit, and removals that fail. */
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

    @Test
    void theLimitHoldsAlsoWhenOneCallBringsMoreMessagesThanItAllows() throws Exception {
        DeviceMessageStore limited = new DeviceMessageStore(connector, new RedisKeys(0), 5);
        List<DeviceMessageStore.Incoming> first = new java.util.ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            first.add(new DeviceMessageStore.Incoming(0, 0, i, 60, bytes("m" + i)));
        }
        limited.add(Map.of("lim", first), c -> false).get();
        List<DeviceMessageStore.Incoming> burst = new java.util.ArrayList<>();
        for (int i = 3; i <= 8; i++) {
            burst.add(new DeviceMessageStore.Incoming(0, 0, i, 60, bytes("m" + i)));
        }
        // Six at once with a limit of five: the two stored before and the oldest of the six go.
        assertThat(packetIds(limited.add(Map.of("lim", burst), c -> false).get().get("lim"))).containsExactly(3, 4, 5, 6, 7, 8);
        assertThat(io.tbmq.localstack.RedisCli.command(redis.port(), "ZCARD {lim}_messages").trim()).as("the newest five")
                .isEqualTo(":5");
        assertThat(io.tbmq.localstack.RedisCli.command(redis.port(), "ZRANGE {lim}_messages 0 0")).contains("{lim}_messages_4");
        assertThat(io.tbmq.localstack.RedisCli.command(redis.port(), "EXISTS {lim}_messages_1 {lim}_messages_2 {lim}_messages_3").trim())
                .as("the trimmed messages' strings deleted").isEqualTo(":0");
    }

    @Test
    void aRemovalThatFailsIsTriedAgainSoTheAcknowledgedMessageIsNotLoadedAgain() throws Exception {
        assertThat(packetIds(add("retried", message(1), message(2)))).containsExactly(1, 2);
        acknowledgeFirstWhileRedisRefuses("retried", "-eval -evalsha",
                () -> assertThat(redisCli("ZCARD {retried}_messages").trim()).as("the removal was refused").isEqualTo(":2"));
        // Redis takes scripts again: the next try removes it, without another acknowledgement.
        assertThat(store.load("retried").get().entries()).extracting(DeviceMessageStore.Entry::packetId).as("what the session loads next")
                .containsExactly(2);
    }

    @Test
    void aClientBackWithinTheBackoffHasItsOwnFailedRemovalSentBeforeItsSessionLoads() throws Exception {
        DeviceMessageStore node = new DeviceMessageStore(connector, new RedisKeys(0), 1000); // a backoff of its own
        assertThat(packetIds(node.add(Map.of("back", List.of(message(1), message(2))), c -> false).get().get("back")))
                .containsExactly(1, 2);
        // Both scripts cached first, so neither call below is re-sent after NOSCRIPT (which would reorder them).
        assertThat(node.load("back").get().entries()).hasSize(2);
        node.acknowledge("warm", 1);
        node.flushAcks();
        await().atMost(Duration.ofSeconds(10)).until(() -> node.outstandingAcks() == 0);
        long failedBefore = node.failedRemovals();
        assertThat(redisCli("ACL SETUSER default -eval -evalsha")).startsWith("+OK");
        try {
            node.acknowledge("back", 1);
            node.flushAcks();
            // Tries at 0, 0.2, 0.6, 1.4 and 3.0 s: the next waits 3.2 s, far longer than the load below takes.
            await().atMost(Duration.ofSeconds(20)).until(() -> node.failedRemovals() - failedBefore >= 5);
        } finally {
            await().atMost(Duration.ofSeconds(10)).until(() -> redisCli("ACL SETUSER default +@all").startsWith("+OK"));
        }
        assertThat(node.load("back").get().entries()).extracting(DeviceMessageStore.Entry::packetId)
                .as("what the session loads: its acknowledgement went first, not at the next try").containsExactly(2);
        assertThat(node.outstandingAcks()).isZero();
    }

    @Test
    void aRemovalFailingLongerThanTheAcknowledgementRetryIsGivenUpCountedAndItsMessageComesAgain() throws Exception {
        assertThatThrownBy(() -> new DeviceMessageStore(connector, new RedisKeys(0), 1000, true, Duration.ofMillis(500)))
                .hasMessageContaining("tbmq.persistence.acknowledgement-retry must be at least 1s");
        DeviceMessageStore node = new DeviceMessageStore(connector, new RedisKeys(0), 1000, true, Duration.ofSeconds(1));
        assertThat(packetIds(node.add(Map.of("outlasted", List.of(message(1), message(2))), c -> false).get().get("outlasted")))
                .containsExactly(1, 2);
        assertThat(redisCli("ACL SETUSER default -eval -evalsha")).startsWith("+OK");
        try {
            node.acknowledge("outlasted", 1);
            node.flushAcks();
            // Tried at 0, 0.2, 0.6 and 1.4 s: that one has failed for over the 1 s and is given up.
            await().atMost(Duration.ofSeconds(20)).until(() -> node.acknowledgementsGivenUp() == 1);
            assertThat(node.outstandingAcks()).as("nothing left to try again").isZero();
        } finally {
            await().atMost(Duration.ofSeconds(10)).until(() -> redisCli("ACL SETUSER default +@all").startsWith("+OK"));
        }
        assertThat(node.load("outlasted").get().entries()).extracting(DeviceMessageStore.Entry::packetId)
                .as("what the session loads: the acknowledged message again").containsExactly(1, 2);
        assertThat(node.acknowledgementsGivenUp()).isEqualTo(1);
    }

    @Test
    void aLoadRightAfterRedisLostItsScriptsWaitsForTheClientsRemovalSentAgainAfterNoscript() throws Exception {
        DeviceMessageStore node = new DeviceMessageStore(connector, new RedisKeys(0), 1000);
        assertThat(packetIds(node.add(Map.of("restarted", List.of(message(1), message(2))), c -> false).get().get("restarted")))
                .containsExactly(1, 2);
        // As after a restart or a failover: no script cached, until another client's load caches load.lua again.
        assertThat(redisCli("SCRIPT FLUSH")).startsWith("+OK");
        assertThat(node.load("another").get().entries()).isEmpty();

        // The removal gets NOSCRIPT and goes again as EVAL, after the load's EVALSHA was written.
        node.acknowledge("restarted", 1);
        assertThat(node.load("restarted").get().entries()).extracting(DeviceMessageStore.Entry::packetId)
                .as("what the session loads: not the message it acknowledged").containsExactly(2);
        assertThat(node.outstandingAcks()).isZero();
    }

    @Test
    void aClearWhileARemovalWaitsToBeTriedAgainKeepsTheNextSessionsMessageUnderTheSamePacketId() throws Exception {
        assertThat(packetIds(add("renewed", message(1), message(2)))).containsExactly(1, 2);
        // remove.lua fails at ZREM; clear.lua and add.lua do not use it.
        acknowledgeFirstWhileRedisRefuses("renewed", "-zrem", () -> {
            store.clear("renewed").get();
            assertThat(packetIds(add("renewed", message(3)))).as("the next session starts packet ids again").containsExactly(1);
        });
        assertThat(redisCli("TTL {renewed}_last_packet_id").trim()).as("the next session's state does not expire").isEqualTo(":-1");
        assertThat(redisCli("GET {renewed}_cleared")).as("the time of the clear").startsWith("$13");
        DeviceMessageStore.Loaded next = store.load("renewed").get();
        assertThat(next.entries()).extracting(DeviceMessageStore.Entry::packetId).as("the old session's acknowledgement removed nothing")
                .containsExactly(1);
        assertThat(new String(next.entries().get(0).value(), StandardCharsets.UTF_8)).isEqualTo("m3");

        // The next session's own acknowledgements remove (a client takes more than a millisecond to answer).
        Thread.sleep(2);
        store.acknowledge("renewed", 1);
        store.flushAcks();
        await().atMost(Duration.ofSeconds(10)).until(() -> redisCli("ZCARD {renewed}_messages").trim().equals(":0"));
    }

    @Test
    void anotherNodesLateRemovalSkipsAClientClearedSince() throws Exception {
        assertThat(packetIds(add("crossed", message(1), message(2)))).containsExactly(1, 2);
        DeviceMessageStore otherNode = new DeviceMessageStore(connector, new RedisKeys(0), 1000);
        // The client connects to the other node with clean start; this node does not know yet and tries again.
        acknowledgeFirstWhileRedisRefuses("crossed", "-zrem", () -> {
            otherNode.clear("crossed").get();
            assertThat(packetIds(otherNode.add(Map.of("crossed", List.of(message(3))), c -> false).get().get("crossed")))
                    .containsExactly(1);
        });
        DeviceMessageStore.Loaded next = otherNode.load("crossed").get();
        assertThat(next.entries()).extracting(DeviceMessageStore.Entry::packetId).as("the late removal skipped the cleared client")
                .containsExactly(1);
        assertThat(new String(next.entries().get(0).value(), StandardCharsets.UTF_8)).isEqualTo("m3");
    }

    @Test
    void aSessionThatMovedToAnotherNodeIsNotWrittenFromHereAnyMore() throws Exception {
        assertThat(packetIds(add("moved", message(1), message(2)))).containsExactly(1, 2);
        // The client connected to another node, which may clear the session and start packet ids again.
        acknowledgeFirstWhileRedisRefuses("moved", "-eval -evalsha", () -> store.letGo("moved"));
        assertThat(store.load("moved").get().entries()).extracting(DeviceMessageStore.Entry::packetId)
                .as("not removed from here: the new holder sends it again, with DUP").containsExactly(1, 2);
    }

    interface Step {
        void run() throws Exception;
    }

    /**
     * Acknowledges the client's packet 1 while Redis refuses {@code rules} to the store's user, waits
     * until its removal failed, runs {@code meanwhile}, lets Redis take everything again and waits
     * until the store is done with the acknowledgement (removed, or dropped).
     */
    private static void acknowledgeFirstWhileRedisRefuses(String client, String rules, Step meanwhile) throws Exception {
        long failedBefore = store.failedRemovals();
        assertThat(redisCli("ACL SETUSER default " + rules)).startsWith("+OK");
        try {
            store.acknowledge(client, 1);
            store.flushAcks();
            await().atMost(Duration.ofSeconds(10)).until(() -> store.failedRemovals() > failedBefore);
            meanwhile.run();
        } finally {
            // Retried: every later test needs it, and a loaded machine may drop one reply.
            await().atMost(Duration.ofSeconds(10)).until(() -> redisCli("ACL SETUSER default +@all").startsWith("+OK"));
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> store.outstandingAcks() == 0);
    }

    private static DeviceMessageStore.Incoming message(int offset) {
        return new DeviceMessageStore.Incoming(0, 0, offset, 60, bytes("m" + offset));
    }

    private static String redisCli(String command) {
        return io.tbmq.localstack.RedisCli.command(redis.port(), command);
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
