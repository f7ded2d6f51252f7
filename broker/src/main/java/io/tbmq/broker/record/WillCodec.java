package io.tbmq.broker.record;

import java.nio.ByteBuffer;
import java.util.Arrays;


/**
 * A Will as it travels in a session record, so that the node that notices its client's node died
 * can publish it: {@code i64 message expiry seconds | i64 delay seconds | PublishMessageCodec bytes}.
 */
public final class WillCodec {

    private WillCodec() {
    }

    public static byte[] encode(Will will) {
        byte[] message = PublishMessageCodec.encode(new PublishMessage(will.topic(), will.qos(), will.retain(), will.payload(),
                will.properties(), will.clientId(), 0, 0));
        return ByteBuffer.allocate(16 + message.length).putLong(will.messageExpirySeconds()).putLong(will.delaySeconds())
                .put(message).array();
    }

    public static Will decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long expiry = b.getLong();
        long delay = b.getLong();
        PublishMessage m = PublishMessageCodec.decode(Arrays.copyOfRange(bytes, 16, bytes.length));
        return new Will(m.publisherId(), m.topic(), m.qos(), m.retain(), m.payload(), m.properties(), expiry, delay);
    }
}
