package io.tbmq.broker.record;


/**
 * A message on its way to one client: the routed message plus what this delivery decided, the
 * QoS (the lower of published and granted [MQTT-3.8.4-8]), the RETAIN flag to send and the
 * Subscription Identifiers of the matching subscriptions. A message from a persistent store also
 * carries the packet id and score the store assigned, and whether it was sent before (DUP).
 *
 * @param packetId assigned by the store, 0 when the session assigns one
 * @param score the store's order key, 0 for messages not stored
 */
public record OutboundMessage(PublishMessage message, int qos, boolean retain, int[] subscriptionIds, int packetId,
        long score, boolean dup) {
    private static final int[] NONE = new int[0];

    public OutboundMessage(PublishMessage message, int qos, boolean retain, int[] subscriptionIds) {
        this(message, qos, retain, subscriptionIds, 0, 0, false);
    }

    public static OutboundMessage of(PublishMessage message, int qos, boolean retain) {
        return new OutboundMessage(message, qos, retain, NONE);
    }

    public boolean stored() {
        return score != 0;
    }
}
