package io.tbmq.broker.codec;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;

/**
 * A bounds-checked cursor over the variable header and payload of one complete MQTT packet.
 * Reading past the packet's Remaining Length is a malformed packet, never an index exception.
 */
final class FrameReader {
    private final ByteBuf buf;
    private final String utf8Ref;
    private int pos;
    private int end;

    FrameReader(ByteBuf buf, int from, int length, boolean v5) {
        this.buf = buf;
        this.pos = from;
        this.end = from + length;
        this.utf8Ref = v5 ? "MQTT-1.5.4-1" : "MQTT-1.5.3-1";
    }

    int remaining() {
        return end - pos;
    }

    boolean hasRemaining() {
        return pos < end;
    }

    int position() {
        return pos;
    }

    /** Narrows the readable end, for a property block inside the packet. Returns the old end. */
    int limit(int newEnd) {
        int old = end;
        end = newEnd;
        return old;
    }

    private void need(int n, String what) {
        if (end - pos < n) {
            throw ProtocolViolation.malformed("§2.1.4", "packet ends inside " + what);
        }
    }

    int u8(String what) {
        need(1, what);
        return buf.getUnsignedByte(pos++);
    }

    int u16(String what) {
        need(2, what);
        int v = buf.getUnsignedShort(pos);
        pos += 2;
        return v;
    }

    long u32(String what) {
        need(4, what);
        long v = buf.getUnsignedInt(pos);
        pos += 4;
        return v;
    }

    /** A Variable Byte Integer, at most four bytes and minimally encoded [MQTT-1.5.5-1]. */
    int varInt(String what) {
        int value = 0;
        int shift = 0;
        int count = 0;
        int digit;
        do {
            if (count == 4) {
                throw ProtocolViolation.malformed("§1.5.5", what + " longer than four bytes");
            }
            digit = u8(what);
            value |= (digit & 0x7F) << shift;
            shift += 7;
            count++;
        } while ((digit & 0x80) != 0);
        if (count > 1 && digit == 0) {
            throw ProtocolViolation.malformed("MQTT-1.5.5-1", what + " not minimally encoded");
        }
        return value;
    }

    /** A UTF-8 Encoded String: validated, then skipped. */
    void skipString(String what) {
        int length = u16(what + " length");
        need(length, what);
        if (!Utf8.isValid(buf, pos, length)) {
            throw ProtocolViolation.malformed(utf8Ref, what + " is not well-formed UTF-8 or contains U+0000");
        }
        pos += length;
    }

    /** A UTF-8 Encoded String, validated and decoded. */
    String string(String what) {
        int start = pos + 2;
        skipString(what);
        return buf.toString(start, pos - start, StandardCharsets.UTF_8);
    }

    /** Binary Data: a two-byte length and that many bytes. Returns the length. */
    int skipBinary(String what) {
        int length = u16(what + " length");
        need(length, what);
        pos += length;
        return length;
    }

    /** Binary data validated as UTF-8 (a payload with Payload Format Indicator 1). */
    boolean isUtf8(int from, int length) {
        return Utf8.isValid(buf, from, length);
    }

    /** '+' or '#' among the bytes (safe on UTF-8: multi-byte sequences never contain ASCII bytes). */
    boolean containsWildcard(int from, int length) {
        for (int i = from; i < from + length; i++) {
            byte b = buf.getByte(i);
            if (b == '+' || b == '#') {
                return true;
            }
        }
        return false;
    }

    void skip(int n, String what) {
        need(n, what);
        pos += n;
    }
}
