package io.tbmq.broker.record;

/**
 * An application message as the broker routes it through Kafka: immutable, independent of any
 * connection. Payload bytes are shared, never mutated.
 *
 * @param createdAtMicros when the broker received it (epoch microseconds), for delivery latency
 * @param expiresAtMillis when its Message Expiry Interval runs out (epoch milliseconds), 0 for never
 */
public record PublishMessage(String topic, int qos, boolean retain, byte[] payload, MessageProperties properties,
        String publisherId, long createdAtMicros, long expiresAtMillis) {

    public boolean isExpired(long nowMillis) {
        return expiresAtMillis != 0 && nowMillis >= expiresAtMillis;
    }

    /** Seconds left of the Message Expiry Interval, for forwarding [MQTT-3.3.2-6]; -1 when none. */
    public long remainingExpirySeconds(long nowMillis) {
        if (expiresAtMillis == 0) {
            return -1;
        }
        return Math.max(0, (expiresAtMillis - nowMillis + 999) / 1000);
    }

    public PublishMessage withRetain(boolean retainFlag) {
        return retainFlag == retain ? this
                : new PublishMessage(topic, qos, retainFlag, payload, properties, publisherId, createdAtMicros, expiresAtMillis);
    }
}
