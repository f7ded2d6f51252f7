package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;

/**
 * A scale-up whose new pods never start (no node has room for them, a volume that is never bound)
 * is undone by editing the spec back: the pods that never started were never met, so they hold no
 * slots and can go at once, without the drain a master that served slots needs. The proof is the
 * cluster's, not the pods': the answering pods below them serve every slot, with no migration open,
 * and list no node but each other.
 */
public final class UnstartedPods {
    private UnstartedPods() {
    }

    /**
     * How many of {@code replicas} pods to keep when the spec asks for {@code masters}: the highest
     * ordinals down to {@code masters} go if none of them started and the pods that answered
     * ({@code answering}, below them) serve all 16384 slots between them and know no other node;
     * otherwise all stay.
     */
    public static int replicasToKeep(int masters, int replicas, List<NodeState> answering, IntPredicate started) {
        int keep = replicas;
        while (keep > masters && !started.test(keep - 1)) {
            keep--;
        }
        if (keep == replicas) {
            return replicas;
        }
        Set<String> ids = answering.stream().map(NodeState::id).collect(Collectors.toSet());
        BitSet served = new BitSet(SlotPlanner.SLOTS);
        for (NodeState node : answering) {
            if (node.ordinal() >= keep || !node.migrating().isEmpty() || !node.importing().isEmpty()
                    || !ids.containsAll(node.known()) || !ids.containsAll(node.addresses().keySet())) {
                // One of them answers after all, keys are on their way between masters, or the cluster
                // lists a node no answering pod is (one that was met once): not now.
                return replicas;
            }
            served.or(node.slots());
        }
        return served.cardinality() == SlotPlanner.SLOTS ? keep : replicas;
    }
}
