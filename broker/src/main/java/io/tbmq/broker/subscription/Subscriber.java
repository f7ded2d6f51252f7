package io.tbmq.broker.subscription;

import java.util.Arrays;
import io.tbmq.broker.record.SubscriptionOptions;

/**
 * One client that a message is to be delivered to, with the options of every subscription of
 * that client the topic matched, merged: the highest QoS [MQTT-3.3.4-2], all Subscription
 * Identifiers [MQTT-3.3.4-3], and Retain As Published if any of them asked for it.
 */
public final class Subscriber {
    private final String clientId;
    private int qos;
    private boolean retainAsPublished;
    private int[] subscriptionIds = EMPTY;
    private static final int[] EMPTY = new int[0];

    Subscriber(String clientId, SubscriptionOptions options) {
        this.clientId = clientId;
        merge(options);
    }

    void merge(SubscriptionOptions options) {
        qos = Math.max(qos, options.qos());
        retainAsPublished |= options.retainAsPublished();
        if (options.subscriptionId() != 0) {
            subscriptionIds = Arrays.copyOf(subscriptionIds, subscriptionIds.length + 1);
            subscriptionIds[subscriptionIds.length - 1] = options.subscriptionId();
        }
    }

    public String clientId() {
        return clientId;
    }

    public int qos() {
        return qos;
    }

    public boolean retainAsPublished() {
        return retainAsPublished;
    }

    public int[] subscriptionIds() {
        return subscriptionIds;
    }

    @Override
    public String toString() {
        return clientId + "(qos " + qos + ")";
    }
}
