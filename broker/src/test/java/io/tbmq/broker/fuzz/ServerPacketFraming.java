package io.tbmq.broker.fuzz;

/**
 * A version-independent check of what a broker writes: a sequence of complete packets of the
 * types a server may send, with the fixed-header flags the specification fixes for each
 * ([MQTT-2.1.3-1]) and a well-formed Remaining Length (§2.1.4).
 */
final class ServerPacketFraming {
    private ServerPacketFraming() {
    }

    /** Throws AssertionError for the first bad packet; true if a CONNACK accepted a CONNECT. */
    static boolean check(byte[] out) {
        boolean accepted = false;
        int at = 0;
        while (at < out.length) {
            int start = at;
            int type = (out[at] & 0xFF) >>> 4;
            int flags = out[at] & 0x0F;
            at++;
            int length = 0;
            int shift = 0;
            int b;
            do {
                if (at >= out.length || shift > 21) {
                    throw new AssertionError("bad Remaining Length in packet at offset " + start);
                }
                b = out[at++] & 0xFF;
                length |= (b & 0x7F) << shift;
                shift += 7;
            } while ((b & 0x80) != 0);
            if (at + length > out.length) {
                throw new AssertionError("packet at offset " + start + " claims " + length + " bytes, " + (out.length - at) + " follow");
            }
            checkFlags(type, flags, start);
            if (type == 2) {
                if (length < 2) {
                    throw new AssertionError("CONNACK shorter than 2 bytes");
                }
                accepted |= out[at + 1] == 0;
            }
            at += length;
        }
        return accepted;
    }

    private static void checkFlags(int type, int flags, int offset) {
        boolean ok = switch (type) {
            case 3 -> ((flags >>> 1) & 3) != 3; // PUBLISH: any DUP/RETAIN, QoS 0-2
            case 6 -> flags == 2; // PUBREL
            case 2, 4, 5, 7, 9, 11, 13, 14, 15 -> flags == 0;
            default -> throw new AssertionError("a server never sends packet type " + type + " (offset " + offset + ")");
        };
        if (!ok) {
            throw new AssertionError("packet type " + type + " with flags " + flags + " at offset " + offset);
        }
    }
}
