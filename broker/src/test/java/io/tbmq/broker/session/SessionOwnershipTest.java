package io.tbmq.broker.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.testing.TestSink;

/**
 * A persistent session belongs to the connection that opened it last. A connection whose CONNECT
 * is still finishing (loading the store) when the client reconnects or closes must not take the
 * session back when its load completes: the client would then receive nothing on its live
 * connection while the session looked connected.
 */
class SessionOwnershipTest {
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final SessionRegistry registry = new SessionRegistry(new SubscriptionTrie(), timers, 100, false, (c, r) -> { },
            s -> CompletableFuture.completedFuture(null), InMemorySessionStore.INSTANCE, SessionJournal.NONE, RemoteSessions.NONE);

    @AfterEach
    void stop() {
        timers.shutdownNow();
    }

    @Test
    void anAdministratorDisconnectsAClientAndItsPersistentSessionStaysUnlessCleared() {
        Sink first = new Sink();
        Session session = registry.open("dev", false, 600, first).session();
        session.resume(first);
        assertThat(registry.disconnectByAdmin("dev", session.epoch() + 1, false)).as("another session of the client").isFalse();
        assertThat(first.byAdmin).isFalse();
        assertThat(registry.disconnectByAdmin("dev", session.epoch(), false)).isTrue();
        assertThat(first.byAdmin).isTrue();
        registry.disconnected(session, first); // the connection closes
        assertThat(registry.get("dev")).as("persistent: kept for its expiry").isSameAs(session);

        Sink second = new Sink();
        Session again = registry.open("dev", false, 600, second).session();
        again.resume(second);
        assertThat(registry.disconnectByAdmin("dev", 0, true)).isTrue();
        assertThat(second.byAdmin).isTrue();
        assertThat(registry.get("dev")).as("cleared at once").isNull();
        assertThat(again.isEnded()).isTrue();
        registry.disconnected(again, second); // the close that follows changes nothing
        assertThat(registry.get("dev")).isNull();
        assertThat(registry.disconnectByAdmin("dev", 0, true)).isFalse();
    }

    @Test
    void aReplacedConnectionWhoseLoadCompletesLateDoesNotTakeTheSessionBack() {
        Sink first = new Sink();
        Sink second = new Sink();
        Session session = registry.open("dev", false, 600, first).session();
        session.persistence(Persistence.DEVICE);
        assertThat(session.beginLoading(first)).isTrue();

        // The client reconnects before the first connection's load came back.
        assertThat(registry.open("dev", false, 600, second).session()).isSameAs(session);
        assertThat(first.takenOver).isTrue();
        assertThat(session.beginLoading(second)).isTrue();

        assertThat(session.restore(first, new int[0], List.of(stored(1)), 1)).isFalse();
        assertThat(session.resume(first)).isFalse();
        assertThat(session.restore(second, new int[0], List.of(stored(1)), 1)).isTrue();
        assertThat(session.resume(second)).isTrue();
        session.offer(stored(2));

        assertThat(first.written).isEmpty();
        assertThat(second.written).containsExactly(1L, 2L);
    }

    @Test
    void theOldLoadCompletingFirstStillLeavesTheSessionWithTheNewConnection() {
        Sink first = new Sink();
        Sink second = new Sink();
        Session session = registry.open("dev", false, 600, first).session();
        session.persistence(Persistence.DEVICE);
        session.beginLoading(first);
        registry.open("dev", false, 600, second);

        // The new connection has not begun loading yet when the old load completes.
        assertThat(session.restore(first, new int[0], List.of(stored(1)), 1)).isFalse();
        assertThat(session.resume(first)).isFalse();
        session.beginLoading(second);
        session.restore(second, new int[0], List.of(stored(1)), 1);
        session.resume(second);

        assertThat(first.written).isEmpty();
        assertThat(second.written).containsExactly(1L);
    }

    @Test
    void aConnectionClosedWhileLoadingLeavesTheSessionOfflineAndExpiring() {
        Sink first = new Sink();
        Session session = registry.open("dev", false, 600, first).session();
        session.persistence(Persistence.DEVICE);
        session.beginLoading(first);
        registry.disconnected(session, first);

        assertThat(session.restore(first, new int[0], List.of(stored(1)), 1)).isFalse();
        assertThat(session.resume(first)).isFalse();
        assertThat(session.isConnected()).as("offline: the store keeps its messages").isFalse();
        assertThat(registry.get("dev")).isSameAs(session);
        session.offer(stored(2));
        assertThat(first.written).isEmpty();

        // The next connection finds everything in the store, in order.
        Sink second = new Sink();
        registry.open("dev", false, 600, second);
        session.beginLoading(second);
        session.restore(second, new int[0], List.of(stored(1), stored(2)), 2);
        session.resume(second);
        assertThat(second.written).containsExactly(1L, 2L);
    }

    @Test
    void aConnectionStillConnectingIsTakenOverToo() {
        Sink first = new Sink();
        Sink second = new Sink();
        Session session = registry.open("mem", false, 600, first).session();
        // The first connection has not attached yet (its CONNECT waits for something) when the second arrives.
        registry.open("mem", false, 600, second);
        assertThat(first.takenOver).isTrue();
        assertThat(session.resume(first)).isFalse();
        assertThat(session.resume(second)).isTrue();
        session.offer(new OutboundMessage(message(), 1, false, new int[0]));
        assertThat(first.written).isEmpty();
        assertThat(second.written).hasSize(1);
    }

    private static PublishMessage message() {
        return new PublishMessage("t", 1, false, new byte[0], MessageProperties.NONE, "p", 0, 0);
    }

    private static OutboundMessage stored(long score) {
        return new OutboundMessage(message(), 1, false, new int[0], (int) score, score, false);
    }

    private final class Sink extends TestSink {
        final List<Long> written = new ArrayList<>();
        boolean takenOver;
        boolean byAdmin;

        @Override
        public void scheduleDrain() {
            Session s = registry.get(registry.all().iterator().next().clientId());
            s.drain(this);
        }

        @Override
        public boolean writePublish(OutboundMessage message, int packetId, boolean dup) {
            written.add(message.score());
            return true;
        }

        @Override
        public void takenOver(boolean successorCleanStart) {
            takenOver = true;
        }

        @Override
        public void disconnectedByAdmin() {
            byAdmin = true;
        }
    }
}
