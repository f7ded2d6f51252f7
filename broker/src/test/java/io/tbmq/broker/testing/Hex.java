package io.tbmq.broker.testing;

import java.util.HexFormat;

/** Hex strings with optional spaces, as the packet table writes bytes. */
public final class Hex {
    private Hex() {
    }

    public static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    public static String of(byte[] bytes) {
        return HexFormat.ofDelimiter(" ").formatHex(bytes);
    }
}
