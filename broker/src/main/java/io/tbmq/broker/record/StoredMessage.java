package io.tbmq.broker.record;

import java.nio.ByteBuffer;
import java.util.Arrays;


/**
 * A message for one subscriber as it is stored (Redis value, tbmq.msg.persisted record body): the
 * delivery decisions (QoS, RETAIN, Subscription Identifiers) and the routed message.
 *
 * <pre>u8 version(1) | u8 qos | u8 flags | u8 n | n × i32 subscription id | PublishMessageCodec bytes</pre>
 *
 * Flags: bit 0 RETAIN, bit 1 possibly sent before (a copy routed again after a node crashed: DUP).
 */
public final class StoredMessage {
    private static final byte VERSION = 1;
    private static final int RETAIN = 1;
    private static final int SENT_BEFORE = 2;

    private StoredMessage() {
    }

    public static byte[] encode(OutboundMessage m) {
        byte[] message = PublishMessageCodec.encode(m.message());
        int[] ids = m.subscriptionIds();
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * ids.length + message.length);
        b.put(VERSION).put((byte) m.qos()).put((byte) ((m.retain() ? RETAIN : 0) | (m.dup() ? SENT_BEFORE : 0))).put((byte) ids.length);
        for (int id : ids) {
            b.putInt(id);
        }
        return b.put(message).array();
    }

    /**
     * Decodes a stored value; {@code packetId}, {@code score} and {@code dup} come from where it was
     * stored, and a copy encoded as possibly sent before is DUP whatever {@code dup} says.
     */
    public static OutboundMessage decode(byte[] value, int packetId, long score, boolean dup) {
        ByteBuffer b = ByteBuffer.wrap(value);
        if (b.get() != VERSION) {
            throw new IllegalArgumentException("unknown stored message version");
        }
        int qos = b.get();
        int flags = b.get();
        boolean retain = (flags & RETAIN) != 0;
        int[] ids = new int[b.get() & 0xFF];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = b.getInt();
        }
        PublishMessage message = PublishMessageCodec.decode(Arrays.copyOfRange(value, b.position(), value.length));
        return new OutboundMessage(message, qos, retain, ids, packetId, score, dup || (flags & SENT_BEFORE) != 0);
    }
}
