package io.tbmq.broker.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import io.tbmq.broker.auth.Acl;
import io.tbmq.broker.message.PublishMessage;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.session.OutboundMessage;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.Subscriber;
import io.tbmq.broker.subscription.SubscriptionTrie;

/**
 * The consuming side of the message log: matches each message against the subscription trie and
 * gives one copy to each subscriber: straight to the session for in-memory sessions (and QoS 0),
 * through Kafka for persistent DEVICE and APPLICATION sessions.
 */
public final class Router {
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final SubscriptionTrie trie;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final Predicate<String> connected;
    private volatile PersistentDestinations destinations = PersistentDestinations.NONE;

    public Router(SubscriptionTrie trie, SessionRegistry sessions, BrokerMetrics metrics) {
        this.trie = trie;
        this.sessions = sessions;
        this.metrics = metrics;
        this.connected = sessions::isConnected;
    }

    public void destinations(PersistentDestinations d) {
        this.destinations = d;
    }

    public void route(PublishMessage message) {
        route(message, -1, -1);
    }

    /**
     * Routes one message read at {@code sourcePartition}/{@code sourceOffset} of the log. The
     * future completes when every persistent copy is in Kafka.
     */
    public CompletableFuture<Void> route(PublishMessage message, int sourcePartition, long sourceOffset) {
        List<Subscriber> subscribers = trie.match(message.topic(), message.publisherId(), connected);
        List<CompletableFuture<Void>> pending = null;
        for (Subscriber subscriber : subscribers) {
            Session session = sessions.get(subscriber.clientId());
            if (session == null) {
                continue;
            }
            Acl acl = session.deliveryAcl();
            if (acl != null && !acl.canReceive(message.topic())) {
                continue;
            }
            int qos = Math.min(message.qos(), subscriber.qos());
            // Retain is forwarded only when asked for (Retain As Published) [MQTT-3.3.1-12/13].
            boolean retain = subscriber.retainAsPublished() && message.retain();
            OutboundMessage copy = new OutboundMessage(message, qos, retain, subscriber.subscriptionIds());
            CompletableFuture<Void> persisted = switch (session.persistence()) {
                case DEVICE -> qos > 0 ? destinations.device(session, copy, sourcePartition, sourceOffset) : null;
                case APPLICATION -> destinations.application(session, copy);
                case MEMORY -> null;
            };
            if (persisted == null) {
                session.offer(copy);
            } else {
                if (pending == null) {
                    pending = new ArrayList<>(2);
                }
                pending.add(persisted);
            }
        }
        metrics.routed(subscribers.size());
        if (pending == null) {
            return DONE;
        }
        return pending.size() == 1 ? pending.get(0) : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }
}
