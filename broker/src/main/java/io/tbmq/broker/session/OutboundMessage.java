package io.tbmq.broker.session;

import io.tbmq.broker.message.PublishMessage;

/**
 * A message on its way to one client: the routed message plus what this delivery decided, the
 * QoS (the lower of published and granted [MQTT-3.8.4-8]), the RETAIN flag to send and the
 * Subscription Identifiers of the matching subscriptions.
 */
public record OutboundMessage(PublishMessage message, int qos, boolean retain, int[] subscriptionIds) {
    private static final int[] NONE = new int[0];

    public static OutboundMessage of(PublishMessage message, int qos, boolean retain) {
        return new OutboundMessage(message, qos, retain, NONE);
    }
}
