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
 * A copy with more than 255 Subscription Identifiers (a client may hold 1000 subscriptions that all
 * match) is written as version 2, whose count is a u16; every other copy keeps version 1, which
 * brokers of earlier versions read.
 */
public final class StoredMessage {
    private static final byte VERSION = 1;
    private static final byte VERSION_WIDE_IDS = 2;
    private static final int RETAIN = 1;
    private static final int SENT_BEFORE = 2;

    private StoredMessage() {
    }

    public static byte[] encode(OutboundMessage m) {
        byte[] message = PublishMessageCodec.encode(m.message());
        int[] ids = m.subscriptionIds();
        if (ids.length > 0xFFFF) {
            throw new IllegalArgumentException("too many subscription identifiers: " + ids.length);
        }
        boolean wide = ids.length > 0xFF;
        ByteBuffer b = ByteBuffer.allocate((wide ? 5 : 4) + 4 * ids.length + message.length);
        b.put(wide ? VERSION_WIDE_IDS : VERSION).put((byte) m.qos())
                .put((byte) ((m.retain() ? RETAIN : 0) | (m.dup() ? SENT_BEFORE : 0)));
        if (wide) {
            b.putShort((short) ids.length);
        } else {
            b.put((byte) ids.length);
        }
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
        byte version = b.get();
        if (version != VERSION && version != VERSION_WIDE_IDS) {
            throw new IllegalArgumentException("unknown stored message version");
        }
        int qos = b.get();
        int flags = b.get();
        boolean retain = (flags & RETAIN) != 0;
        int[] ids = new int[version == VERSION ? b.get() & 0xFF : b.getShort() & 0xFFFF];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = b.getInt();
        }
        PublishMessage message = PublishMessageCodec.decode(Arrays.copyOfRange(value, b.position(), value.length));
        return new OutboundMessage(message, qos, retain, ids, packetId, score, dup || (flags & SENT_BEFORE) != 0);
    }
}
