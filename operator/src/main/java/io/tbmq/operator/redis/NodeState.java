package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.Map;
import java.util.Set;

/**
 * One Redis node as it sees itself: its id, the slots it serves, slots it is handing over
 * (migrating, slot to target id) or taking over (importing, slot to source id), the ids of the
 * nodes it knows, and where it reaches them ({@code addresses}: id to {@code host:port}, as its
 * CLUSTER NODES lists them).
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
        if (!known.contains(other.id())) {
            return false;
        }
        String listed = addresses.get(other.id());
        return listed == null || listed.equals(other.node().host() + ":" + other.node().port());
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
