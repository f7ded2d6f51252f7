package io.tbmq.broker.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tbmq.broker.cluster.Downlinks;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.persistence.redis.RedisConnector;
import io.tbmq.broker.persistence.redis.RedisKeys;
import io.tbmq.broker.persistence.redis.TestRedisConfig;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.testing.TestSink;
import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisNode;

/**
 * The routing consumer's DEVICE copies written into a real redis-server and handed to the
 * session: in order, once, and across a Redis restart within the batch, so the batch's other copies
 * are not routed a second time.
 */
class DeviceWritesIT {
    static RedisNode redis;
    static RedisConnector connector;
    static DeviceWrites writes;
    static SessionRegistry sessions;
    static ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    static final List<String> written = new CopyOnWriteArrayList<>();
    static Session session;
    static final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @BeforeAll
    static void start() throws Exception {
        redis = RedisNode.standalone(Files.createTempDirectory(Path.of("target").toAbsolutePath(), "writes-it"), true)
                .start(Duration.ofSeconds(30));
        connector = new RedisConnector(TestRedisConfig.standalone(redis.address(), Duration.ofSeconds(2)));
        DeviceMessageStore store = new DeviceMessageStore(connector, new RedisKeys(0), 1000);
        sessions = new SessionRegistry(new SubscriptionTrie(), timers, 1000, false, (c, r) -> { }, new SessionRegistry.SessionListener() {
            @Override
            public CompletableFuture<Void> sessionEnded(Session s) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void sessionMoved(String clientId) {
            }
        }, new DeviceSessionStore(store, Duration.ZERO), SessionJournal.NONE, RemoteSessions.NONE);
        writes = new DeviceWrites(store, sessions, new BrokerMetrics(meters), 3600, RemoteSessions.NONE, Downlinks.NONE);
        Sink sink = new Sink();
        session = sessions.open("dev", false, 600, sink).session();
        session.persistence(Persistence.DEVICE);
        session.resume(sink);
    }

    @AfterAll
    static void stop() {
        if (connector != null) {
            connector.close();
        }
        if (redis != null) {
            redis.close();
        }
        timers.shutdownNow();
    }

    @Test
    void aBatchIsStoredAndHandedOverInOrderAndAReplayIsNotHandedOverAgain() throws Exception {
        written.clear();
        DeviceWrites.Batch batch = writes.batch();
        for (int offset = 0; offset < 3; offset++) {
            batch.add("dev", session.epoch(), copy("m" + offset), 7, offset);
        }
        batch.add("gone", 42, copy("for nobody"), 7, 3);
        batch.store().get(10, TimeUnit.SECONDS);
        assertThat(written).containsExactly("m0", "m1", "m2");

        DeviceWrites.Batch replay = writes.batch();
        replay.add("dev", session.epoch(), copy("m2"), 7, 2);
        replay.store().get(10, TimeUnit.SECONDS);
        assertThat(written).as("a replayed offset is recognised by Redis").containsExactly("m0", "m1", "m2");
    }

    @Test
    void aBatchOutlivesARedisRestartInsteadOfFailing() throws Exception {
        written.clear();
        redis.stop();
        DeviceWrites.Batch batch = writes.batch();
        batch.add("dev", session.epoch(), copy("during the outage"), 8, 100);
        CompletableFuture<Void> stored = batch.store();
        Thread.sleep(3_000);
        assertThat(stored).as("still trying while Redis is down").isNotDone();
        redis.start(Duration.ofSeconds(30));
        stored.get(30, TimeUnit.SECONDS);
        assertThat(written).containsExactly("during the outage");
    }

    @Test
    void aClientsLaterBatchWaitsForItsEarlierOneSoRedisDoesNotRefuseTheEarlierAsAReplay() throws Exception {
        written.clear();
        redis.stop();
        DeviceWrites.Batch earlier = writes.batch();
        earlier.add("dev", session.epoch(), copy("earlier"), 9, 200);
        CompletableFuture<Void> first = earlier.store();
        // The earlier batch's retries have backed off to a second by now; a fresh batch would retry sooner.
        Thread.sleep(3_000);
        DeviceWrites.Batch later = writes.batch();
        later.add("dev", session.epoch(), copy("later"), 9, 201);
        CompletableFuture<Void> second = later.store();
        redis.start(Duration.ofSeconds(30));
        first.get(30, TimeUnit.SECONDS);
        second.get(30, TimeUnit.SECONDS);
        assertThat(written).as("both stored, in the order they were read").containsExactly("earlier", "later");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> writes.unfinishedClients() == 0);
    }

    @Test
    void aBatchGivenUpByItsConsumerStopsWritingAndNoLongerHoldsTheClient() throws Exception {
        written.clear();
        redis.stop();
        DeviceWrites.Batch abandoned = writes.batch();
        abandoned.add("dev", session.epoch(), copy("given up"), 10, 300);
        CompletableFuture<Void> first = abandoned.store();
        DeviceWrites.Batch reread = writes.batch();
        reread.add("dev", session.epoch(), copy("read again"), 10, 300);
        CompletableFuture<Void> second = reread.store();
        Thread.sleep(500);
        assertThat(second).as("queued behind the first").isNotDone();
        first.cancel(false);
        redis.start(Duration.ofSeconds(30));
        second.get(30, TimeUnit.SECONDS);
        Thread.sleep(1_500);
        assertThat(written).as("written once, by the batch read again").containsExactly("read again");
    }

    @Test
    void aFullRedisIsWrittenToAgainUntilItHasRoomHoweverLongItTakes() throws Exception {
        written.clear();
        // noeviction, as the operator runs Redis: a full master refuses writes (OOM) instead of dropping keys.
        RedisCli.command(redis.port(), "CONFIG SET maxmemory-policy noeviction");
        RedisCli.command(redis.port(), "CONFIG SET maxmemory 1");
        try {
            DeviceWrites.Batch batch = writes.batch();
            batch.add("dev", session.epoch(), copy("into a full master"), 12, 500);
            CompletableFuture<Void> stored = batch.store();
            Thread.sleep(3_000);
            assertThat(stored).as("still trying while the master is full").isNotDone();
            assertThat(written).isEmpty();
            RedisCli.command(redis.port(), "CONFIG SET maxmemory 0");
            stored.get(10, TimeUnit.SECONDS);
            assertThat(written).containsExactly("into a full master");
        } finally {
            RedisCli.command(redis.port(), "CONFIG SET maxmemory 0");
        }
    }

    @Test
    void aSessionClearedWhileRedisRefusesItsMessagesNoLongerHoldsTheBatch() throws Exception {
        written.clear();
        Session leaving = sessions.open("dev-leaving", false, 600, new Sink()).session();
        leaving.persistence(Persistence.DEVICE);
        double goneBefore = gone();
        RedisCli.command(redis.port(), "CONFIG SET maxmemory-policy noeviction");
        RedisCli.command(redis.port(), "CONFIG SET maxmemory 1");
        try {
            DeviceWrites.Batch batch = writes.batch();
            batch.add("dev-leaving", leaving.epoch(), copy("for a session cleared to make room"), 13, 600);
            batch.add("dev-leaving", leaving.epoch(), copy("for a session cleared to make room"), 13, 601);
            CompletableFuture<Void> stored = batch.store();
            DeviceWrites.Batch next = writes.batch();
            next.add("dev-leaving", leaving.epoch(), copy("queued behind"), 13, 602);
            CompletableFuture<Void> queued = next.store();
            Thread.sleep(1_500);
            assertThat(stored).isNotDone();
            assertThat(queued).isNotDone();
            // What operations.md advises for a full master: clear sessions that will not come back (the admin API).
            assertThat(sessions.disconnectByAdmin("dev-leaving", 0, true)).isTrue();
            stored.get(10, TimeUnit.SECONDS);
            queued.get(10, TimeUnit.SECONDS);
            assertThat(gone() - goneBefore).as("all three messages dropped, counted").isEqualTo(3.0);
        } finally {
            RedisCli.command(redis.port(), "CONFIG SET maxmemory 0");
        }
        assertThat(written).isEmpty();
        assertThat(RedisCli.command(redis.port(), "EXISTS {dev-leaving}_messages")).as("nothing stored for it").startsWith(":0");
    }

    private static double gone() {
        var counter = meters.find("tbmq.messages.dropped").tag("reason", "session-gone").counter();
        return counter == null ? 0 : counter.count();
    }

    private static OutboundMessage copy(String payload) {
        PublishMessage m = new PublishMessage("t", 1, false, payload.getBytes(), MessageProperties.NONE, "p", 0, 0);
        return new OutboundMessage(m, 1, false, new int[0], 0, 0, false);
    }

    private static final class Sink extends TestSink {
        Sink() {
            super(1000);
        }


        @Override
        public void scheduleDrain() {
            session.drain(this);
        }

        @Override
        public boolean writePublish(OutboundMessage message, int packetId, boolean dup) {
            written.add(new String(message.message().payload()));
            return true;
        }
    }
}
