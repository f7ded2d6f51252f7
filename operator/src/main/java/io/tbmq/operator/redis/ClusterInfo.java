package io.tbmq.operator.redis;

/**
 * What one node says about the cluster in CLUSTER INFO. With {@code cluster-require-full-coverage no}
 * a node reports {@code cluster_state:ok} as soon as it reaches a majority of the masters, before
 * gossip has told it who serves every slot; a client that reads its topology from that node then
 * finds slots with no owner. A node serves its part of the cluster only once both hold.
 *
 * @param stateOk whether it reports {@code cluster_state:ok}
 * @param slotsAssigned how many slots it knows an owner of ({@code cluster_slots_assigned})
 */
public record ClusterInfo(boolean stateOk, int slotsAssigned) {

    public static ClusterInfo parse(String reply) {
        boolean ok = false;
        int assigned = 0;
        for (String line : reply.split("\r?\n")) {
            String field = line.strip();
            if (field.equals("cluster_state:ok")) {
                ok = true;
            } else if (field.startsWith("cluster_slots_assigned:")) {
                assigned = Integer.parseInt(field.substring("cluster_slots_assigned:".length()));
            }
        }
        return new ClusterInfo(ok, assigned);
    }

    /** Whether the node reaches the cluster and knows the owner of every slot. */
    public boolean knowsEveryOwner() {
        return stateOk && slotsAssigned == SlotPlanner.SLOTS;
    }

    /**
     * Whether {@code move} may send slots to the node this describes. A new move waits until the
     * target knows every owner; one that finishes a migration already open needs only
     * cluster_state:ok, since its slots stay half-moved while it waits (and an unowned slot, which
     * only the planner's Assign after it would fix, must not hold it up for good).
     */
    public boolean mayReceive(SlotStep.Move move) {
        boolean finishing = !move.source().migrating().isEmpty() || !move.target().importing().isEmpty();
        return finishing ? stateOk : knowsEveryOwner();
    }

    /** Why it does not yet, for a status message ("redis-1 " + this). */
    public String lack() {
        if (!stateOk) {
            return "does not report cluster_state:ok yet";
        }
        return "knows the owners of " + slotsAssigned + " of " + SlotPlanner.SLOTS + " slots so far (gossip brings the rest)";
    }
}
