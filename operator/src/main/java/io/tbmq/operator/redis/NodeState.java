package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.Map;
import java.util.Set;

/**
 * One Redis node as it sees itself: its id, the slots it serves, slots it is handing over
 * (migrating, slot to target id) or taking over (importing, slot to source id), and the ids of the
 * nodes it knows.
 */
public record NodeState(RedisNode node, String id, BitSet slots, Map<Integer, String> migrating,
        Map<Integer, String> importing, Set<String> known) {

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
