package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.session.InMemorySessionStore;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.testing.TestSink;

/**
 * What a node announces in tbmq.client.session about a client it holds is what every other node
 * routes by: a client with a live connection here must never be announced as disconnected, or the
 * other nodes store its messages in Redis without sending them, and it receives nothing until it
 * reconnects. Both races below were seen as acknowledged messages never delivered in a rolling
 * restart (ClusterFaultsIT): a node drains, its clients reconnect to another node, and the
 * caretaker adopts the drained node's sessions within the same second.
 */
class SessionAnnouncementTest {
    private static final String NODE = "node-it";
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final SubscriptionTrie trie = new SubscriptionTrie();
    private final ClusterDirectory directory = new ClusterDirectory(trie);
    private final Map<String, SessionState> announced = new ConcurrentHashMap<>();
    /** Runs inside the journal, when this node announces something: lets a test interleave a connect. */
    private Consumer<String> onAnnounce = clientId -> { };
    private final SessionRegistry sessions = new SessionRegistry(trie, timers, 100, false, (c, r) -> { },
            s -> CompletableFuture.completedFuture(null), InMemorySessionStore.INSTANCE, new SessionJournal() {
                @Override
                public void saved(Session session, long disconnectedAtMillis) {
                    announced.put(session.clientId(), session.state(NODE, disconnectedAtMillis == 0, disconnectedAtMillis));
                    onAnnounce.accept(session.clientId());
                }

                @Override
                public void ended(String clientId) {
                    announced.remove(clientId);
                }
            }, directory);
    private final SessionFeed feed = new SessionFeed(NODE, sessions, directory, state -> { });

    @BeforeEach
    void join() {
        feed.caughtUp();
    }

    @AfterEach
    void stop() {
        timers.shutdownNow();
    }

    /** The record the drained node wrote last: the client disconnected from it. */
    private static SessionState drainedFrom(String node, String clientId, long version) {
        return new SessionState(clientId, 42, Persistence.DEVICE, 600, System.currentTimeMillis(),
                List.of(new SessionState.Sub("pairs/" + clientId + "/+", new SubscriptionOptions(1, false, false, 0, 0))), node,
                false, version, null, List.of());
    }

    private void read(SessionState record) {
        feed.record(record.clientId().getBytes(StandardCharsets.UTF_8), record.encode());
    }

    @Test
    void aClientStillLoadingItsStoredMessagesStaysAnnouncedConnectedWhenTheCaretakersAdoptionArrives() {
        SessionState onC = drainedFrom("node-c", "sub", 10);
        read(onC);
        // The client reconnects here; its CONNECT announced it, and its stored messages are loading.
        Sink connection = new Sink();
        Session session = sessions.open("sub", false, 600, connection).session();
        sessions.journal().saved(session, 0);
        assertThat(session.isConnected()).as("not attached before its store is loaded").isFalse();

        // The caretaker adopted the drained node's session from the record before the connect.
        read(onC.adoptedBy("node-b", System.currentTimeMillis()));

        assertThat(announced.get("sub").connected()).as("announced connected while its connection loads").isTrue();
        assertThat(announced.get("sub").supersedes(onC.version() + 1, "node-b")).isTrue();
        assertThat(sessions.get("sub")).isSameAs(session);
        assertThat(connection.takenOver).isFalse();
    }

    @Test
    void aCaretakerDoesNotAnnounceAsDisconnectedAClientThatReconnectedToItMeanwhile() throws Exception {
        NodeLiveness liveness = new NodeLiveness(NODE, Duration.ofSeconds(5));
        liveness.record(NODE.getBytes(StandardCharsets.UTF_8), "hb".getBytes(StandardCharsets.UTF_8));
        liveness.record("node-c".getBytes(StandardCharsets.UTF_8), null);
        liveness.caughtUp();
        read(drainedFrom("node-c", "first", 10));
        read(drainedFrom("node-c", "second", 10));
        // While the caretaker adopts the drained node's sessions one by one, the client of the
        // other one reconnects to it.
        Sink connection = new Sink();
        List<Session> reconnected = new ArrayList<>();
        onAnnounce = adoptedNow -> {
            if (reconnected.isEmpty()) {
                String other = adoptedNow.equals("first") ? "second" : "first";
                Session s = sessions.open(other, false, 600, connection).session();
                s.resume(connection);
                reconnected.add(s);
                sessions.journal().saved(s, 0);
            }
        };

        int adopted = new OrphanAdoption(NODE, liveness, directory, sessions, state -> { }).adoptOrphans();

        assertThat(adopted).isPositive();
        Session live = reconnected.get(0);
        assertThat(sessions.get(live.clientId())).isSameAs(live);
        assertThat(announced.get(live.clientId()).connected()).as("the reconnected client is announced connected").isTrue();
        assertThat(directory.find(live.clientId())).isNull();
    }

    @Test
    void anOfflineRecordThisNodeWroteOfAClientConnectedHereIsCorrected() {
        Sink connection = new Sink();
        Session session = sessions.open("sub", false, 600, connection).session();
        session.resume(connection);
        // However it came about, this node wrote it offline.
        sessions.journal().saved(session, System.currentTimeMillis());
        SessionState wrong = announced.get("sub");

        read(wrong);

        assertThat(announced.get("sub").connected()).isTrue();
        assertThat(announced.get("sub").supersedes(wrong.version(), NODE)).isTrue();
        assertThat(announced.get("sub").version()).isGreaterThan(wrong.version());
    }

    @Test
    void anOfflineRecordThisNodeWroteBeforeTheClientReconnectedHereIsLeftAlone() {
        Sink first = new Sink();
        Session session = sessions.open("sub", false, 600, first).session();
        session.resume(first);
        sessions.disconnected(session, first);
        SessionState offline = announced.get("sub");
        assertThat(offline.connected()).isFalse();
        Sink second = new Sink();
        sessions.open("sub", false, 600, second).session().resume(second);
        sessions.journal().saved(session, 0);
        SessionState reconnected = announced.get("sub");

        read(offline);

        assertThat(announced.get("sub")).as("nothing written again").isSameAs(reconnected);
    }

    private static final class Sink extends TestSink {
        boolean takenOver;

        @Override
        public void takenOver(boolean successorCleanStart) {
            takenOver = true;
        }
    }
}
