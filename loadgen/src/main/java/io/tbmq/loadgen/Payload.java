package io.tbmq.loadgen;

import io.netty.buffer.ByteBuf;

/**
 * What a benchmark message carries so the subscriber can judge it alone: the send time
 * (System.nanoTime of this JVM, which runs both ends), the publisher's sequence number and the
 * publisher index; zero padding up to the payload size (62 bytes by default, as in the TBMQ paper's tests).
 */
final class Payload {
    static final int HEADER = 20;

    private Payload() {
    }

    static void write(ByteBuf buf, long sentNanos, long sequence, int publisher, int size) {
        buf.writeLong(sentNanos).writeLong(sequence).writeInt(publisher).writeZero(size - HEADER);
    }

    static long sentNanos(ByteBuf buf) {
        return buf.getLong(buf.readerIndex());
    }

    static long sequence(ByteBuf buf) {
        return buf.getLong(buf.readerIndex() + 8);
    }

    static int publisher(ByteBuf buf) {
        return buf.getInt(buf.readerIndex() + 16);
    }
}
