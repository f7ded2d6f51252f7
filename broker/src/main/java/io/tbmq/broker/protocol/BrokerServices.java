package io.tbmq.broker.protocol;

import java.util.concurrent.ScheduledExecutorService;

import io.tbmq.broker.auth.Authenticator;
import io.tbmq.broker.config.MqttConfig;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.SessionStores;
import io.tbmq.broker.retain.RetainedStore;
import io.tbmq.broker.routing.Publisher;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.will.WillService;

/**
 * What the packet handlers work with: the node-wide services, wired once at start (by CDI in the
 * application, by hand in unit tests).
 */
public record BrokerServices(MqttConfig mqtt, SessionRegistry sessions, SubscriptionTrie trie, RetainedStore retained,
        Publisher publisher, Authenticator authenticator, WillService wills, BrokerMetrics metrics,
        ScheduledExecutorService timers, SessionStores stores, DeliveryHold deliveryHold) {
}
