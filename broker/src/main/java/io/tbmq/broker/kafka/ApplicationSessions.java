package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.tbmq.broker.persistence.ApplicationStore;
import io.tbmq.broker.session.Session;

/**
 * Persistent APPLICATION sessions of this node: the client's topic is created on its first
 * connect, one consumer feeds it while it is connected, and the topic goes when the session ends.
 */
public final class ApplicationSessions implements ApplicationStore {
    private final KafkaClients clients;
    private final ApplicationTopics topics;
    private final int maxQueued;
    private final Duration idleFetchWait;
    private final ConcurrentHashMap<String, ApplicationConsumer> consumers = new ConcurrentHashMap<>();
    /** Consumers of clients that went offline, until their last commit is done. */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> stopping = new ConcurrentHashMap<>();

    public ApplicationSessions(KafkaClients clients, ApplicationTopics topics, int maxQueued, Duration idleFetchWait) {
        this.clients = clients;
        this.topics = topics;
        this.maxQueued = maxQueued;
        this.idleFetchWait = idleFetchWait;
    }

    @Override
    public CompletableFuture<Void> prepare(String clientId) {
        return topics.ensure(clientId);
    }

    @Override
    public void attach(Session session, Object connection) {
        ApplicationConsumer consumer = new ApplicationConsumer(clients.clientConsumer(topics.group(session.clientId()),
                "app-" + session.clientId().hashCode(), idleFetchWait), topics.topic(session.clientId()), session, connection, maxQueued);
        ApplicationConsumer previous = consumers.put(session.clientId(), consumer);
        CompletableFuture<Void> before = previous != null ? previous.stop()
                : stopping.getOrDefault(session.clientId(), CompletableFuture.completedFuture(null));
        Thread t = new Thread(consumer, "tbmq-app-" + session.clientId());
        t.setDaemon(true);
        // The new consumer reads from the commit the previous one makes as it stops: started before it,
        // it would read older records again, which the session ignores as sent, and their offsets would
        // hold its commit for good. Acknowledgements meanwhile wait in its queue.
        before.whenComplete((v, e) -> t.start());
    }

    @Override
    public void detach(String clientId, Object connection) {
        ApplicationConsumer c = consumers.get(clientId);
        if (c != null && c.connection() == connection && consumers.remove(clientId, c)) {
            CompletableFuture<Void> stopped = c.stop();
            stopping.put(clientId, stopped);
            stopped.whenComplete((v, e) -> stopping.remove(clientId, stopped));
        }
    }

    @Override
    public void acknowledged(String clientId, long score) {
        ApplicationConsumer c = consumers.get(clientId);
        if (c != null) {
            c.acknowledged(score - 1);
        }
    }

    /** The consumer stops first, so its last commit cannot re-create the group; then the topic and the group go. */
    @Override
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
