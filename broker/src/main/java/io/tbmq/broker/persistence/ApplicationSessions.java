package io.tbmq.broker.persistence;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.tbmq.broker.kafka.ApplicationTopics;
import io.tbmq.broker.kafka.KafkaClients;
import io.tbmq.broker.session.Session;

/**
 * Persistent APPLICATION sessions of this node: the client's topic is created on its first
 * connect, one consumer feeds it while it is connected, and the topic goes when the session ends.
 */
public final class ApplicationSessions implements AutoCloseable {
    private final KafkaClients clients;
    private final ApplicationTopics topics;
    private final int maxQueued;
    private final Duration idleFetchWait;
    private final ConcurrentHashMap<String, ApplicationConsumer> consumers = new ConcurrentHashMap<>();

    public ApplicationSessions(KafkaClients clients, ApplicationTopics topics, int maxQueued, Duration idleFetchWait) {
        this.clients = clients;
        this.topics = topics;
        this.maxQueued = maxQueued;
        this.idleFetchWait = idleFetchWait;
    }

    /** Makes sure the client's topic exists (before CONNACK, so routing to it cannot fail). */
    public CompletableFuture<Void> prepare(String clientId) {
        return topics.ensure(clientId);
    }

    /**
     * The client is connected through {@code connection}: start feeding it from what it
     * acknowledged last. A consumer left by an earlier connection is stopped.
     */
    public void attach(Session session, Object connection) {
        ApplicationConsumer consumer = new ApplicationConsumer(clients.clientConsumer(topics.group(session.clientId()),
                "app-" + session.clientId().hashCode(), idleFetchWait), topics.topic(session.clientId()), session, connection, maxQueued);
        ApplicationConsumer previous = consumers.put(session.clientId(), consumer);
        if (previous != null) {
            previous.stop();
        }
        Thread t = new Thread(consumer, "tbmq-app-" + session.clientId());
        t.setDaemon(true);
        t.start();
    }

    /**
     * {@code connection} closed: its consumer stops. A successor's consumer (a takeover attached it
     * before the old connection's close ran) is left alone.
     */
    public void detach(String clientId, Object connection) {
        ApplicationConsumer c = consumers.get(clientId);
        if (c != null && c.connection() == connection && consumers.remove(clientId, c)) {
            c.stop();
        }
    }

    void acknowledged(String clientId, long score) {
        ApplicationConsumer c = consumers.get(clientId);
        if (c != null) {
            c.acknowledged(score - 1);
        }
    }

    /**
     * The session ended: its consumer stops first (so its last commit cannot re-create the
     * group), then the topic and the group go.
     */
    public CompletableFuture<Void> ended(String clientId) {
        ApplicationConsumer c = consumers.remove(clientId);
        CompletableFuture<Void> stopped = c == null ? CompletableFuture.completedFuture(null) : c.stop();
        return stopped.thenCompose(v -> topics.delete(clientId));
    }

    @Override
    public void close() {
        consumers.values().forEach(ApplicationConsumer::stop);
        consumers.clear();
    }
}
