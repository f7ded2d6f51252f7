package io.tbmq.broker.record;

/**
 * A Will Message from CONNECT (§3.1.2.5), kept until the connection ends.
 *
 * @param messageExpirySeconds the Will's Message Expiry Interval, -1 when none; it starts when the Will is published
 * @param delaySeconds the Will Delay Interval
 */
public record Will(String clientId, String topic, int qos, boolean retain, byte[] payload, MessageProperties properties,
        long messageExpirySeconds, long delaySeconds) {

    /** The message as published at {@code nowMillis} (wall clock) and {@code nowMicros} (the broker's clock). */
    public PublishMessage toMessage(long nowMillis, long nowMicros) {
        long expiresAt = messageExpirySeconds < 0 ? 0 : nowMillis + messageExpirySeconds * 1000;
        return new PublishMessage(topic, qos, retain, payload, properties, clientId, nowMicros, expiresAt);
    }
}
