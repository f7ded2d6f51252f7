package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The next thing to do to the Redis Cluster; {@link SlotPlanner} decides it from what the nodes report. */
public sealed interface SlotStep {

    /** Human-readable, for the status condition and Events. */
    String describe();

    /** Introduce {@code newcomers} to the cluster through {@code via}, or tell {@code via} where restarted ones are now. */
    record Meet(NodeState via, List<NodeState> newcomers) implements SlotStep {
        public String describe() {
            return "redis-" + via.ordinal() + " meets " + newcomers.stream().map(n -> "redis-" + n.ordinal()).toList()
                    + " at their current addresses";
        }
    }

    /** Gossip has not yet told every member about every other. */
    record AwaitGossip(String why) implements SlotStep {
        public String describe() {
            return why;
        }
    }

    /** Serve slots nobody serves yet (a new cluster). */
    record Assign(Map<NodeState, BitSet> slots) implements SlotStep {
        public String describe() {
            int n = slots.values().stream().mapToInt(BitSet::cardinality).sum();
            return "assigning " + n + " slots to " + slots.size() + " masters";
        }
    }

    /** Move slots, keys included, from one master to another. */
    record Move(NodeState source, NodeState target, BitSet slots, int remaining) implements SlotStep {
        public String describe() {
            return "moving " + slots.cardinality() + " slots from redis-" + source.ordinal() + " to redis-" + target.ordinal()
                    + " (" + remaining + " left to move after this step)";
        }
    }

    /**
     * Make every member forget the masters that serve nothing any more and, once the clients still
     * connected to them have let go, reset them. All at once: each waits for the same topology refresh.
     */
    record Forget(List<NodeState> members, List<NodeState> removed) implements SlotStep {
        public String describe() {
            return "removing " + removed.stream().map(n -> "redis-" + n.ordinal()).collect(Collectors.joining(", "))
                    + " from the cluster";
        }
    }

    /** The cluster has exactly the wanted masters, every slot served, slots balanced. */
    record Done() implements SlotStep {
        public String describe() {
            return "cluster formed and balanced";
        }
    }
}
