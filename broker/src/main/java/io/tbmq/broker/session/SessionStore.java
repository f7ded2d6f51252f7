package io.tbmq.broker.session;

import java.util.concurrent.CompletableFuture;

/**
 * Where a session's messages are kept beyond the session itself, as the session sees it: in memory
 * only ({@link InMemorySessionStore}), in Redis for persistent DEVICE sessions, in a Kafka topic of
 * its own for persistent APPLICATION sessions. The broker holds one per kind and picks one per
 * session by the session's kind.
 */
public interface SessionStore {

    /** Before CONNACK: the store can take the client's messages (an APPLICATION client's topic exists). */
    CompletableFuture<Void> prepare(Session session);

    /**
     * CONNACK was sent on {@code target}: the session resumes there with what this store holds.
     * False, sending nothing, if {@code target} no longer owns the session. On {@code target}'s event loop.
     */
    boolean attach(Session session, DeliverySink target);

    /** {@code target}'s connection closed. */
    void detach(Session session, DeliverySink target);

    /** PUBACK, PUBCOMP or an error PUBREC of a message this store holds at {@code score}: it is done. */
    void acknowledged(Session session, int packetId, long score);

    /** PUBREC of a message this store holds: only the PUBREL is owed now. */
    void released(Session session, int packetId, long score);

    /** Whether a gap in a session's stored messages can be filled from here ({@link #missed}). */
    boolean fillsGaps();

    /**
     * A stored message arrived past a gap (an earlier one was stored but never handed over, e.g.
     * its write was replayed after a Redis failure): load the store and call
     * {@link Session#catchUp}. Called outside the session's lock.
     */
    void missed(Session session);

    /**
     * Some time after a reconnect: load the store and call {@link Session#catchUp}, in case a node
     * that still took the client for offline stored messages without sending them.
     */
    void recheck(Session session);

    /** The session ended: what this store holds of it goes; completes when it is gone. */
    CompletableFuture<Void> ended(Session session);

    /** The client's session moved to another node: nothing of it is written from here any more. */
    default void moved(String clientId) {
    }
}
