package io.tbmq.broker.session;

import java.util.concurrent.CompletableFuture;

/**
 * The store of sessions kept only in this node's memory (clean sessions, and every session when the
 * node has no persistent store): nothing to prepare, load, acknowledge or delete.
 */
public final class InMemorySessionStore implements SessionStore {
    public static final SessionStore INSTANCE = new InMemorySessionStore();
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private InMemorySessionStore() {
    }

    @Override
    public CompletableFuture<Void> prepare(Session session) {
        return DONE;
    }

    @Override
    public boolean attach(Session session, DeliverySink target) {
        return session.resume(target);
    }

    @Override
    public void detach(Session session, DeliverySink target) {
    }

    @Override
    public void acknowledged(Session session, int packetId, long score) {
    }

    @Override
    public void released(Session session, int packetId, long score) {
    }

    @Override
    public boolean fillsGaps() {
        return false;
    }

    @Override
    public void missed(Session session) {
    }

    @Override
    public void recheck(Session session) {
    }

    @Override
    public CompletableFuture<Void> ended(Session session) {
        return DONE;
    }
}
