package io.tbmq.broker.cluster;

import java.nio.ByteBuffer;

/**
 * An administrator's order for one client held by another node (the admin API of any node can be
 * asked), carried in that node's downlink topic beside the message copies (key = client id). The
 * epoch names the session it was meant for, so a replay cannot touch a newer session of the client.
 *
 * <pre>u8 kind(2) | i64 epoch | u8 clear</pre>
 *
 * @param clear whether the session ends too (subscriptions and stored messages go), not only its connection
 */
public record AdminCommand(long epoch, boolean clear) {
    /** The first byte: a downlink record's version is 1, so the two never mix. */
    static final byte KIND = 2;

    public static boolean is(byte[] value) {
        return value.length > 0 && value[0] == KIND;
    }

    public byte[] encode() {
        return ByteBuffer.allocate(10).put(KIND).putLong(epoch).put((byte) (clear ? 1 : 0)).array();
    }

    public static AdminCommand decode(byte[] value) {
        if (value.length != 10 || value[0] != KIND) {
            throw new IllegalArgumentException("not an admin command");
        }
        ByteBuffer b = ByteBuffer.wrap(value, 1, 9);
        return new AdminCommand(b.getLong(), b.get() == 1);
    }
}
