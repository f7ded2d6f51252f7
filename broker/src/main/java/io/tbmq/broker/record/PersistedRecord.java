package io.tbmq.broker.record;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A record of tbmq.msg.persisted (key = subscriber client id): one message for one persistent
 * DEVICE session, with where it came from in tbmq.msg.all (so Redis stores it once however often
 * Kafka replays it) and the session it was routed for (a record for an ended session is dropped).
 *
 * <pre>u8 version(1) | i64 session epoch | i32 source partition | i64 source offset | i64 expires at (ms, 0 never) | stored message</pre>
 */
public record PersistedRecord(long epoch, int sourcePartition, long sourceOffset, long expiresAtMillis, byte[] stored) {
    private static final byte VERSION = 1;
    private static final int HEADER = 1 + 8 + 4 + 8 + 8;

    public byte[] encode() {
        return ByteBuffer.allocate(HEADER + stored.length).put(VERSION).putLong(epoch).putInt(sourcePartition)
                .putLong(sourceOffset).putLong(expiresAtMillis).put(stored).array();
    }

    public static PersistedRecord decode(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value);
        if (value.length < HEADER || b.get() != VERSION) {
            throw new IllegalArgumentException("not a persisted-message record");
        }
        return new PersistedRecord(b.getLong(), b.getInt(), b.getLong(), b.getLong(), Arrays.copyOfRange(value, HEADER, value.length));
    }
}
