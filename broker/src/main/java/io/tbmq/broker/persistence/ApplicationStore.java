package io.tbmq.broker.persistence;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.session.Session;

/**
 * Where persistent APPLICATION sessions keep their messages: a log of their own per client (in
 * Kafka), read from what the client acknowledged last while it is connected.
 */
public interface ApplicationStore extends AutoCloseable {

    /** Makes sure the client's log exists (before CONNACK, so routing to it cannot fail). */
    CompletableFuture<Void> prepare(String clientId);

    /**
     * The client is connected through {@code connection}: start feeding it from what it
     * acknowledged last. A reader left by an earlier connection is stopped.
     */
    void attach(Session session, Object connection);

    /**
     * {@code connection} closed: its reader stops. A successor's reader (a takeover attached it
     * before the old connection's close ran) is left alone.
     */
    void detach(String clientId, Object connection);

    /** The client acknowledged the message stored at {@code score}. */
    void acknowledged(String clientId, long score);

    /** The session ended: its reader stops, then its log goes. */
    CompletableFuture<Void> ended(String clientId);

    @Override
    void close();
}
