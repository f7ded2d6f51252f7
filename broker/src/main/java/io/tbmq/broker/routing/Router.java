package io.tbmq.broker.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import org.jboss.logging.Logger;

import io.tbmq.broker.auth.Acl;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.Subscriber;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.util.LogText;

/**
 * The consuming side of the message log: matches each message against the subscription trie
 * (every client of the cluster is in it) and gives one copy to each subscriber: straight to the
 * session for in-memory sessions on this node (and QoS 0), into Redis for persistent DEVICE
 * sessions (then to the session, here or on its node), into the client's Kafka topic for
 * APPLICATION sessions, and through the holding node's downlink topic for clients connected
 * elsewhere.
 */
public final class Router {
    private static final Logger LOG = Logger.getLogger(Router.class);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final SubscriptionTrie trie;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final Predicate<String> connected;
    private final Destinations destinations;
    private final RemoteSessions remote;

    public Router(SubscriptionTrie trie, SessionRegistry sessions, BrokerMetrics metrics, Destinations destinations,
            RemoteSessions remote) {
        this.trie = trie;
        this.sessions = sessions;
        this.metrics = metrics;
        this.destinations = destinations;
        this.remote = remote;
        this.connected = id -> sessions.isConnected(id) || remote.isConnected(id);
    }

    /** Routes a message of an in-process log (no stores): every copy is delivered from memory. */
    public void route(PublishMessage message) {
        route(message, -1, -1, false, null);
    }

    /**
     * Routes one message read at {@code sourcePartition}/{@code sourceOffset} of the log. QoS 1 and 2
     * copies for persistent DEVICE sessions go into {@code deviceCopies}, stored when the batch is
     * routed (null: no store, kept in memory). The future completes when every other copy that leaves
     * this node's memory is in Kafka. A {@code replay} (read again after a node crashed) may have been
     * delivered before: its QoS 1 and 2 copies carry DUP.
     */
    public CompletableFuture<Void> route(PublishMessage message, int sourcePartition, long sourceOffset, boolean replay,
            DeviceCopies deviceCopies) {
        List<Subscriber> subscribers = trie.match(message.topic(), message.publisherId(), connected);
        List<CompletableFuture<Void>> pending = null;
        for (Subscriber subscriber : subscribers) {
            CompletableFuture<Void> sent;
            Session session = sessions.get(subscriber.clientId());
            if (session != null) {
                sent = local(session, subscriber, message, sourcePartition, sourceOffset, replay, deviceCopies);
            } else {
                SessionState elsewhere = remote.find(subscriber.clientId());
                if (elsewhere == null) {
                    // In the trie but held nowhere: a session ending right now.
                    metrics.dropped("session-gone");
                    if (LOG.isDebugEnabled()) {
                        LOG.debugf("message on %s for %s dropped: no such session here or elsewhere", LogText.of(message.topic()),
                                LogText.of(subscriber.clientId()));
                    }
                    continue;
                }
                sent = remote(elsewhere, subscriber, message, sourcePartition, sourceOffset, replay, deviceCopies);
            }
            if (sent != null && !sent.isDone()) {
                if (pending == null) {
                    pending = new ArrayList<>(2);
                }
                pending.add(sent);
            }
        }
        metrics.routed(subscribers.size());
        if (pending == null) {
            return DONE;
        }
        return pending.size() == 1 ? pending.get(0) : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> local(Session session, Subscriber subscriber, PublishMessage message, int sourcePartition,
            long sourceOffset, boolean replay, DeviceCopies deviceCopies) {
        Acl acl = session.deliveryAcl();
        if (acl != null && !acl.canReceive(message.topic())) {
            return null;
        }
        OutboundMessage copy = copyFor(subscriber, message, replay);
        CompletableFuture<Void> persisted = switch (session.persistence()) {
            case DEVICE -> copy.qos() > 0 && deviceCopies != null
                    ? stored(deviceCopies, session.clientId(), session.epoch(), copy, sourcePartition, sourceOffset) : null;
            case APPLICATION -> destinations.application(session.clientId(), copy);
            case MEMORY -> null;
        };
        if (persisted == null) {
            session.offer(copy);
        }
        return persisted;
    }

    private CompletableFuture<Void> remote(SessionState s, Subscriber subscriber, PublishMessage message, int sourcePartition,
            long sourceOffset, boolean replay, DeviceCopies deviceCopies) {
        if (!s.denyReceive().isEmpty() && !Acl.receiveDenied(s.denyReceive()).canReceive(message.topic())) {
            return null;
        }
        OutboundMessage copy = copyFor(subscriber, message, replay);
        return switch (s.persistence()) {
            case DEVICE -> copy.qos() > 0 ? deviceCopies == null ? null
                    : stored(deviceCopies, s.clientId(), s.epoch(), copy, sourcePartition, sourceOffset)
                    : s.connected() ? destinations.downlink(s.node(), s.clientId(), s.epoch(), copy) : null;
            case APPLICATION -> destinations.application(s.clientId(), copy);
            // An offline in-memory session with an expiry still queues on its node.
            case MEMORY -> s.connected() || s.persistent() ? destinations.downlink(s.node(), s.clientId(), s.epoch(), copy) : null;
        };
    }

    /** Into the batch's store call; the batch's future covers it. */
    private static CompletableFuture<Void> stored(DeviceCopies deviceCopies, String clientId, long epoch, OutboundMessage copy,
            int sourcePartition, long sourceOffset) {
        deviceCopies.add(clientId, epoch, copy, sourcePartition, sourceOffset);
        return DONE;
    }

    private static OutboundMessage copyFor(Subscriber subscriber, PublishMessage message, boolean replay) {
        int qos = Math.min(message.qos(), subscriber.qos());
        // Retain is forwarded only when asked for (Retain As Published) [MQTT-3.3.1-12/13].
        boolean retain = subscriber.retainAsPublished() && message.retain();
        // DUP is for QoS 1 and 2 only [MQTT-3.3.1-2].
        return new OutboundMessage(message, qos, retain, subscriber.subscriptionIds(), 0, 0, replay && qos > 0);
    }
}
