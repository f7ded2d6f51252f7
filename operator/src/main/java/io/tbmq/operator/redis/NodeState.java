package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.Map;
import java.util.Set;

/**
 * One Redis node as it sees itself: its id, the slots it serves, slots it is handing over
 * (migrating, slot to target id) or taking over (importing, slot to source id), the ids of the
 * nodes it knows (reaches, no failure flag), and where it lists every other node ({@code addresses}:
 * id to {@code host:port} as its CLUSTER NODES lists them, suspected and failed ones included).
 */
public record NodeState(RedisNode node, String id, BitSet slots, Map<Integer, String> migrating,
        Map<Integer, String> importing, Set<String> known, Map<String, String> addresses) {

    /** A node whose view of the others' addresses is not known (taken as current). */
    public NodeState(RedisNode node, String id, BitSet slots, Map<Integer, String> migrating, Map<Integer, String> importing,
            Set<String> known) {
        this(node, id, slots, migrating, importing, known, Map.of());
    }

    /**
     * Whether this node knows {@code other} where it is now. A pod restarted with a new IP keeps its
     * id, and the others keep listing it at its old address, without any flag, until the node
     * timeout; meanwhile they cannot reach it, yet still report cluster_state:ok.
     */
    public boolean knowsWhereItIs(NodeState other) {
        return known.contains(other.id()) && !listsAtAnOldAddress(other);
    }

    /** Whether this node lists {@code other}'s id at all, flagged as failing or not. */
    public boolean lists(NodeState other) {
        return known.contains(other.id()) || addresses.containsKey(other.id());
    }

    /** Whether this node lists {@code other}'s id at an address {@code other} no longer has (it restarted elsewhere). */
    public boolean listsAtAnOldAddress(NodeState other) {
        String listed = addresses.get(other.id());
        return listed != null && !listed.equals(other.node().host() + ":" + other.node().port());
    }

    /**
     * Whether this node lists {@code other} where it is now, whatever its flags: a CLUSTER MEET took.
     * A failure flag then clears by itself once they talk (for a master that serves slots, Redis
     * waits twice the node timeout after marking it failed); meeting it again changes nothing.
     */
    public boolean listsWhereItIs(NodeState other) {
        return lists(other) && !listsAtAnOldAddress(other);
    }

    public int ordinal() {
        return node.ordinal();
    }

    public int slotCount() {
        return slots.cardinality();
    }

    /** A node that knows nobody else and serves nothing: never joined, or reset after removal. */
    public boolean isAlone() {
        return known.size() <= 1 && slots.isEmpty();
    }
}
