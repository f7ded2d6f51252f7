package io.tbmq.broker.record;

import java.nio.ByteBuffer;
import java.util.Arrays;


/**
 * A message for one client of another node, as it travels in that node's downlink topic (key =
 * client id). The epoch names the session it was meant for; hops count forwards between nodes
 * (a client that moved again while the copy was on its way), bounded so a copy cannot circle.
 *
 * <pre>u8 version(1) | i64 epoch | u8 hops | u16 packet id | i64 score | StoredMessage bytes</pre>
 *
 * @param packetId and {@code score}: assigned by Redis for DEVICE messages, 0 otherwise
 */
public record DownlinkRecord(long epoch, int hops, int packetId, long score, byte[] message) {
    private static final byte VERSION = 1;
    public static final int MAX_HOPS = 3;

    public static DownlinkRecord of(long epoch, OutboundMessage m) {
        return new DownlinkRecord(epoch, 0, 0, 0, StoredMessage.encode(m));
    }

    public DownlinkRecord forwarded() {
        return new DownlinkRecord(epoch, hops + 1, packetId, score, message);
    }

    public boolean stored() {
        return score != 0;
    }

    public OutboundMessage outbound() {
        return StoredMessage.decode(message, packetId, score, false);
    }

    public byte[] encode() {
        return ByteBuffer.allocate(20 + message.length).put(VERSION).putLong(epoch).put((byte) hops).putShort((short) packetId)
                .putLong(score).put(message).array();
    }

    public static DownlinkRecord decode(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value);
        if (value.length < 20 || b.get() != VERSION) {
            throw new IllegalArgumentException("not a downlink record");
        }
        long epoch = b.getLong();
        int hops = b.get() & 0xFF;
        int packetId = b.getShort() & 0xFFFF;
        long score = b.getLong();
        return new DownlinkRecord(epoch, hops, packetId, score, Arrays.copyOfRange(value, 20, value.length));
    }
}
