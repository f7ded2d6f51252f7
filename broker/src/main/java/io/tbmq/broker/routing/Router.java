package io.tbmq.broker.routing;

import java.util.List;
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
 * The consuming side of the message log: matches each message against the subscription trie
 * and hands one copy to each subscriber's session. Persistent-session stores and other nodes'
 * downlink topics plug in here as further destinations.
 */
public final class Router {
    private final SubscriptionTrie trie;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final Predicate<String> connected;

    public Router(SubscriptionTrie trie, SessionRegistry sessions, BrokerMetrics metrics) {
        this.trie = trie;
        this.sessions = sessions;
        this.metrics = metrics;
        this.connected = sessions::isConnected;
    }

    public void route(PublishMessage message) {
        List<Subscriber> subscribers = trie.match(message.topic(), message.publisherId(), connected);
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
            session.offer(new OutboundMessage(message, qos, retain, subscriber.subscriptionIds()));
        }
        metrics.routed(subscribers.size());
    }
}
