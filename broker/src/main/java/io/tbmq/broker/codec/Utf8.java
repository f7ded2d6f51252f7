package io.tbmq.broker.codec;

import io.netty.buffer.ByteBuf;

/**
 * Strict UTF-8 check for MQTT strings: well-formed (no overlong forms, no surrogates, nothing
 * above U+10FFFF) [MQTT-1.5.3-1] and no U+0000 [MQTT-1.5.3-2]. Netty's decoder replaces bad
 * sequences silently, so the broker checks the bytes itself.
 */
public final class Utf8 {
    private Utf8() {
    }

    public static boolean isValid(ByteBuf buf, int index, int length) {
        int i = index;
        int end = index + length;
        while (i < end) {
            int b = buf.getByte(i) & 0xFF;
            if (b == 0) {
                return false;
            }
            if (b < 0x80) {
                i++;
                continue;
            }
            int needed;
            int min;
            int cp;
            if ((b & 0xE0) == 0xC0) {
                needed = 1;
                min = 0x80;
                cp = b & 0x1F;
            } else if ((b & 0xF0) == 0xE0) {
                needed = 2;
                min = 0x800;
                cp = b & 0x0F;
            } else if ((b & 0xF8) == 0xF0) {
                needed = 3;
                min = 0x10000;
                cp = b & 0x07;
            } else {
                return false;
            }
            if (i + needed >= end) {
                return false;
            }
            for (int k = 1; k <= needed; k++) {
                int c = buf.getByte(i + k) & 0xFF;
                if ((c & 0xC0) != 0x80) {
                    return false;
                }
                cp = (cp << 6) | (c & 0x3F);
            }
            if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                return false;
            }
            i += needed + 1;
        }
        return true;
    }

    public static boolean isValid(byte[] bytes) {
        return isValid(io.netty.buffer.Unpooled.wrappedBuffer(bytes), 0, bytes.length);
    }
}
