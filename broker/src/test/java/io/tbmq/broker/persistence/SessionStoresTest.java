package io.tbmq.broker.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.auth.ClientType;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.session.SessionStore;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.testing.TestSink;

/** Which store a session's calls reach, by its kind and by what it was before. */
class SessionStoresTest {
    static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor();
    final List<String> calls = new ArrayList<>();
    final SessionStore devices = new Recording("device");
    final SessionStore applications = new Recording("application");
    final SessionStores stores = new SessionStores(devices, applications, () -> false);

    @Test
    void persistentSessionsGoToTheirKindsStoreAndCleanOnesStayInMemory() {
        assertThat(stores.kindFor(ClientType.DEVICE, 600)).isEqualTo(Persistence.DEVICE);
        assertThat(stores.kindFor(ClientType.APPLICATION, 600)).isEqualTo(Persistence.APPLICATION);
        assertThat(stores.kindFor(ClientType.DEVICE, 0)).isEqualTo(Persistence.MEMORY);
        assertThat(stores.kindFor(ClientType.APPLICATION, 0)).isEqualTo(Persistence.MEMORY);
    }

    @Test
    void aNodeWithoutAStoreKeepsThoseSessionsInMemory() {
        SessionStores none = SessionStores.NONE;
        assertThat(none.kindFor(ClientType.DEVICE, 600)).isEqualTo(Persistence.MEMORY);
        assertThat(none.kindFor(ClientType.APPLICATION, 600)).isEqualTo(Persistence.MEMORY);
        assertThat(none.fillsGaps()).isFalse();
        Sink sink = new Sink();
        Session session = opened(none, sink);
        assertThat(none.attach(session, sink)).as("resumed from memory").isTrue();
        assertThat(session.isConnected()).isTrue();
    }

    @Test
    void aDeviceSessionIsLoadedAcknowledgedAndClearedInRedis() {
        Session session = session(Persistence.DEVICE);
        stores.prepare(session);
        stores.attach(session, new Sink());
        stores.acknowledged(session, 7, 70);
        stores.released(session, 8, 80);
        stores.missed(session);
        stores.ended(session).join();
        assertThat(calls).containsExactly("device prepare", "device attach", "device acknowledged 7", "device released 8",
                "device missed", "device ended");
    }

    @Test
    void aSessionThatWasAPersistentDeviceKeepsItsRedisPartWhenItComesBackClean() {
        // Clean session = false with a zero expiry interval: in memory from now on, but its backlog is in Redis.
        Session session = session(Persistence.DEVICE);
        session.persistence(Persistence.MEMORY);
        stores.attach(session, new Sink());
        stores.acknowledged(session, 1, 10);
        stores.ended(session).join();
        assertThat(calls).containsExactly("device attach", "device acknowledged 1", "device ended");
    }

    @Test
    void anApplicationSessionUsesItsTopicAndLeavesRedisAlone() {
        Session session = session(Persistence.APPLICATION);
        Sink sink = new Sink();
        stores.prepare(session);
        stores.attach(session, sink);
        stores.acknowledged(session, 3, 30);
        stores.detach(session, sink);
        stores.ended(session).join();
        assertThat(calls).containsExactly("application prepare", "application attach", "application acknowledged 3",
                "application detach", "application ended");
    }

    @Test
    void aCleanSessionTouchesNoStore() {
        Sink sink = new Sink();
        Session session = opened(stores, sink);
        assertThat(stores.attach(session, sink)).isTrue();
        stores.detach(session, sink);
        stores.ended(session).join();
        assertThat(calls).isEmpty();
        assertThat(session.isConnected()).isTrue();
    }

    @Test
    void anApplicationClientThatWasAPersistentDeviceGetsItsRedisBacklogBeforeItsTopicIsRead() {
        List<String> feed = new ArrayList<>();
        ApplicationSessionStore application = new ApplicationSessionStore(new ApplicationStore() {
            @Override
            public CompletableFuture<Void> prepare(String clientId) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void attach(Session session, Object connection) {
                feed.add("topic read");
            }

            @Override
            public void detach(String clientId, Object connection) {
            }

            @Override
            public void acknowledged(String clientId, long score) {
            }

            @Override
            public CompletableFuture<Void> ended(String clientId) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void close() {
            }
        }, new Recording("device") {
            @Override
            public boolean attach(Session session, DeliverySink target) {
                feed.add("redis loaded");
                return true;
            }
        });
        Session session = session(Persistence.DEVICE);
        session.persistence(Persistence.APPLICATION);
        new SessionStores(devices, application, () -> false).attach(session, new Sink());
        assertThat(feed).containsExactly("redis loaded", "topic read");
    }

    /** A clean session opened for {@code sink}, as a CONNECT opens it. */
    private static Session opened(SessionStores stores, Sink sink) {
        SessionRegistry registry = new SessionRegistry(new SubscriptionTrie(), TIMERS, 100, false, (c, r) -> { },
                new SessionRegistry.SessionListener() {
                    @Override
                    public CompletableFuture<Void> sessionEnded(Session s) {
                        return CompletableFuture.completedFuture(null);
                    }

                    @Override
                    public void sessionMoved(String clientId) {
                    }
                }, stores, SessionJournal.NONE, RemoteSessions.NONE);
        return registry.open("c1", true, 0, sink).session();
    }

    @AfterAll
    static void stopTimers() {
        TIMERS.shutdownNow();
    }

    private static Session session(Persistence kind) {
        Session session = new Session("c1", 600, 100, false, (c, r) -> { });
        session.persistence(kind);
        return session;
    }

    class Recording implements SessionStore {
        final String name;

        Recording(String name) {
            this.name = name;
        }

        @Override
        public CompletableFuture<Void> prepare(Session session) {
            calls.add(name + " prepare");
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public boolean attach(Session session, DeliverySink target) {
            calls.add(name + " attach");
            return true;
        }

        @Override
        public void detach(Session session, DeliverySink target) {
            calls.add(name + " detach");
        }

        @Override
        public void acknowledged(Session session, int packetId, long score) {
            calls.add(name + " acknowledged " + packetId);
        }

        @Override
        public void released(Session session, int packetId, long score) {
            calls.add(name + " released " + packetId);
        }

        @Override
        public boolean fillsGaps() {
            return true;
        }

        @Override
        public void missed(Session session) {
            calls.add(name + " missed");
        }

        @Override
        public void recheck(Session session) {
            calls.add(name + " recheck");
        }

        @Override
        public CompletableFuture<Void> ended(Session session) {
            calls.add(name + " ended");
            return CompletableFuture.completedFuture(null);
        }
    }

    static class Sink extends TestSink {
    }
}
