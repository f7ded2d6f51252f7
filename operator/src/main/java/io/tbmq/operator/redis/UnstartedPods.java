package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A scale-up whose new pods never join (no node has room for some of them, a volume that is never
 * bound, a pod that keeps crashing) is undone by editing the spec back: pods nobody met hold no
 * slots and can go at once, without the drain a master that served slots needs. The proof is the
 * cluster's, not the pods': the masters to keep answer, serve every slot between them with no
 * migration open, and list no node but each other.
 */
public final class UnstartedPods {
    private UnstartedPods() {
    }

    /**
     * How many of {@code replicas} pods to keep when the spec asks for {@code masters}: {@code masters}
     * if the pods below it that answered ({@code answering}) make a whole cluster by themselves, as
     * above; otherwise all of them, left to the drain.
     */
    public static int replicasToKeep(int masters, int replicas, List<NodeState> answering) {
        if (masters >= replicas) {
            return replicas;
        }
        List<NodeState> kept = answering.stream().filter(n -> n.ordinal() < masters).toList();
        Set<String> ids = kept.stream().map(NodeState::id).collect(Collectors.toSet());
        BitSet served = new BitSet(SlotPlanner.SLOTS);
        for (NodeState node : kept) {
            if (!node.migrating().isEmpty() || !node.importing().isEmpty() || !ids.containsAll(node.known())
                    || !ids.containsAll(node.addresses().keySet())) {
                // Keys on their way between masters, or a node they list (met once, slots or not): the drain's.
                return replicas;
            }
            served.or(node.slots());
        }
        return served.cardinality() == SlotPlanner.SLOTS ? masters : replicas;
    }
}
