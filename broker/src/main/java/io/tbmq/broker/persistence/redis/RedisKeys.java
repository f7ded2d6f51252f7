package io.tbmq.broker.persistence.redis;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Key names of DEVICE sessions in Redis, the TBMQ paper's layout: every key of a client carries one
 * hash tag so they share a slot and one Lua call can touch them all.
 *
 * <pre>
 * {client}_messages             sorted set of message keys; the score keeps growing past 65535
 * {client}_messages_&lt;packetId&gt;  one string per message, with an expiry
 * {client}_last_packet_id       hash: id = last packet id assigned (wraps 65535 -> 1), score = its
 *                               score, delivered = highest score sent at least once (DUP on
 *                               re-delivery), s&lt;partition&gt; = last source offset applied (replay-proof)
 * {client}_cleared              string: when the session was last cleared (Unix ms), for ten minutes
 * </pre>
 *
 * The bookkeeping is one hash so storing a message costs one read and one write of it per
 * client and script call, however many messages the call stores.
 *
 * A client id that is not plain ({@code [A-Za-z0-9._:-]}) is written as {@code ~} + Base64url of
 * its UTF-8 bytes, so braces or separators in an id cannot move its keys into another client's
 * slot or name. With {@code slotGroups > 0} the hash tag is {@code {g<n>}} (n = the client's group)
 * followed by the client part: clients of one group share a slot, so one script call can store
 * messages of many clients (the paper's proposed optimisation).
 */
public final class RedisKeys {
    /** Hash-tagged bases kept for this many clients at most; past it the cache starts over. */
    private static final int CACHED_BASES = 100_000;

    private final int slotGroups;
    private final java.util.concurrent.ConcurrentHashMap<String, String> bases = new java.util.concurrent.ConcurrentHashMap<>();

    public RedisKeys(int slotGroups) {
        this.slotGroups = slotGroups;
    }

    public int slotGroups() {
        return slotGroups;
    }

    /** The group a client belongs to (always 0 without slot groups). */
    public int group(String clientId) {
        return slotGroups == 0 ? 0 : Math.floorMod(clientId.hashCode(), slotGroups);
    }

    static String safe(String clientId) {
        for (int i = 0; i < clientId.length(); i++) {
            char c = clientId.charAt(i);
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                    || c == ':' || c == '-';
            if (!plain) {
                return "~" + Base64.getUrlEncoder().withoutPadding().encodeToString(clientId.getBytes(StandardCharsets.UTF_8));
            }
        }
        return clientId.isEmpty() ? "~" : clientId;
    }

    /** Every stored message names several keys of its client: the base is computed once per client. */
    private String base(String clientId) {
        String base = bases.get(clientId);
        if (base == null) {
            if (bases.size() >= CACHED_BASES) {
                bases.clear();
            }
            base = slotGroups == 0 ? "{" + safe(clientId) + "}" : "{g" + group(clientId) + "}" + safe(clientId);
            bases.put(clientId, base);
        }
        return base;
    }

    public byte[] messages(String clientId) {
        return bytes(base(clientId) + "_messages");
    }

    /** Message strings are this prefix followed by the packet id. */
    public byte[] messagePrefix(String clientId) {
        return bytes(base(clientId) + "_messages_");
    }

    public byte[] message(String clientId, int packetId) {
        return bytes(base(clientId) + "_messages_" + packetId);
    }

    public byte[] lastPacketId(String clientId) {
        return bytes(base(clientId) + "_last_packet_id");
    }

    /** When the client's session was last cleared, for a while (clear.lua, remove.lua). */
    public byte[] cleared(String clientId) {
        return bytes(base(clientId) + "_cleared");
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
