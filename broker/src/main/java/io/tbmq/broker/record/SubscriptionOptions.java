package io.tbmq.broker.record;

/**
 * What a client asked for with one subscription (MQTT 5 §3.8.3.1); v3 clients get defaults.
 *
 * @param subscriptionId the Subscription Identifier, 0 when none
 */
public record SubscriptionOptions(int qos, boolean noLocal, boolean retainAsPublished, int retainHandling, int subscriptionId) {

    public static SubscriptionOptions qos(int qos) {
        return new SubscriptionOptions(qos, false, false, 0, 0);
    }
}
