package io.tbmq.broker.persistence;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.tbmq.broker.message.PublishMessage;
import io.tbmq.broker.message.PublishMessageCodec;
import io.tbmq.broker.session.OutboundMessage;

/**
 * A message for one subscriber as it is stored (Redis value, tbmq.msg.persisted record body): the
 * delivery decisions (QoS, RETAIN, Subscription Identifiers) and the routed message.
 *
 * <pre>u8 version(1) | u8 qos | u8 retain | u8 n | n × i32 subscription id | PublishMessageCodec bytes</pre>
 */
public final class StoredMessage {
    private static final byte VERSION = 1;

    private StoredMessage() {
    }

    public static byte[] encode(OutboundMessage m) {
        byte[] message = PublishMessageCodec.encode(m.message());
        int[] ids = m.subscriptionIds();
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * ids.length + message.length);
        b.put(VERSION).put((byte) m.qos()).put((byte) (m.retain() ? 1 : 0)).put((byte) ids.length);
        for (int id : ids) {
            b.putInt(id);
        }
        return b.put(message).array();
    }

    /** Decodes a stored value; {@code packetId}, {@code score} and {@code dup} come from where it was stored. */
    public static OutboundMessage decode(byte[] value, int packetId, long score, boolean dup) {
        ByteBuffer b = ByteBuffer.wrap(value);
        if (b.get() != VERSION) {
            throw new IllegalArgumentException("unknown stored message version");
        }
        int qos = b.get();
        boolean retain = b.get() == 1;
        int[] ids = new int[b.get() & 0xFF];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = b.getInt();
        }
        PublishMessage message = PublishMessageCodec.decode(Arrays.copyOfRange(value, b.position(), value.length));
        return new OutboundMessage(message, qos, retain, ids, packetId, score, dup);
    }
}
