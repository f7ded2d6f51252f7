package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Decides, from what every Redis pod reports, the one next step that brings the cluster to
 * {@code masters} balanced masters. It keeps no memory: a restarted operator observes the same
 * nodes and resumes where the previous one stopped (an open migration is finished first).
 * Masters are pods 0..masters-1; pods at or above that are being removed and are drained first.
 */
public final class SlotPlanner {
    public static final int SLOTS = 16384;

    private SlotPlanner() {
    }

    /**
     * A node that lists another by its id at an address it no longer has (restarted with a new IP)
     * meets it where it is now. It is listed without a flag until the node timeout, then suspected
     * ({@code fail?}), which with every node restarted at once no majority can confirm, so gossip
     * alone never joins them again. Only ids a member already lists are matched, so a new or reset pod
     * is never met here: safe on any subset of the pods, so the masters that are back find each other
     * before a slow pod (its volume, a long AOF load) is ready too. Only members (ordinal below
     * {@code masters}) meet: a pod being drained may have been forgotten already and must not bring
     * itself back; it is met by a member that still lists it.
     */
    public static Optional<SlotStep.Meet> meetMoved(List<NodeState> nodes, int masters) {
        for (NodeState m : nodes.stream().filter(n -> n.ordinal() < masters).toList()) {
            List<NodeState> moved = nodes.stream().filter(o -> o != m && m.listsAtAnOldAddress(o)).toList();
            if (!moved.isEmpty()) {
                return Optional.of(new SlotStep.Meet(m, moved));
            }
        }
        return Optional.empty();
    }

    /**
     * @param nodes every running pod, ordered by ordinal
     * @param masters the wanted master count (pods 0..masters-1)
     * @param maxSlotsPerStep how many slots one Move carries, so each reconcile stays short and reports progress
     */
    public static SlotStep next(List<NodeState> nodes, int masters, int maxSlotsPerStep) {
        List<NodeState> members = nodes.stream().filter(n -> n.ordinal() < masters).toList();
        List<NodeState> leaving = nodes.stream().filter(n -> n.ordinal() >= masters).toList();
        if (members.size() < masters) {
            throw new IllegalArgumentException("need pods 0.." + (masters - 1) + ", got " + members.size());
        }
        NodeState first = members.get(0);

        // Never listed by the first member, not even as failing: a new pod, or one reset after removal.
        List<NodeState> strangers = members.stream().skip(1).filter(n -> !first.lists(n)).toList();
        if (!strangers.isEmpty()) {
            return new SlotStep.Meet(first, strangers);
        }
        Optional<SlotStep.Meet> moved = meetMoved(nodes, masters);
        if (moved.isPresent()) {
            return moved.get();
        }
        for (NodeState m : members) {
            for (NodeState other : members) {
                if (!m.known().contains(other.id())) {
                    // Listed where it is now but flagged: a meet took and the flag clears once they talk;
                    // meeting again changes nothing (run 55 met redis-1 537 times in the 10 s a fail flag lasts).
                    return new SlotStep.AwaitGossip("redis-" + m.ordinal() + (m.lists(other)
                            ? " still flags redis-" + other.ordinal() + " as failing; Redis clears that once they talk again"
                            : " does not know redis-" + other.ordinal() + " yet"));
                }
            }
        }

        Optional<SlotStep> open = openMigration(nodes);
        if (open.isPresent()) {
            return open.get();
        }

        BitSet served = new BitSet(SLOTS);
        nodes.forEach(n -> served.or(n.slots()));
        int[] quota = quotas(masters);
        if (served.cardinality() < SLOTS) {
            return assignUnserved(members, quota, served);
        }

        int toMoveOff = leaving.stream().mapToInt(NodeState::slotCount).sum();
        for (NodeState donor : leaving) {
            if (donor.slotCount() > 0) {
                NodeState receiver = mostDeficit(members, quota);
                int deficit = quota[receiver.ordinal()] - receiver.slotCount();
                int count = Math.min(Math.min(donor.slotCount(), Math.max(1, deficit)), maxSlotsPerStep);
                return new SlotStep.Move(donor, receiver, take(donor.slots(), count), toMoveOff - count);
            }
        }
        List<NodeState> gone = leaving.stream()
                .filter(g -> !g.isAlone() || members.stream().anyMatch(m -> m.lists(g))).toList();
        if (!gone.isEmpty()) {
            return new SlotStep.Forget(members, gone);
        }

        NodeState donor = members.stream().max(Comparator.comparingInt(n -> n.slotCount() - quota[n.ordinal()])).orElseThrow();
        NodeState receiver = mostDeficit(members, quota);
        int surplus = donor.slotCount() - quota[donor.ordinal()];
        int deficit = quota[receiver.ordinal()] - receiver.slotCount();
        if (surplus <= 0 || deficit <= 0) {
            return new SlotStep.Done();
        }
        int imbalance = members.stream().mapToInt(n -> Math.max(0, quota[n.ordinal()] - n.slotCount())).sum();
        int count = Math.min(Math.min(surplus, deficit), maxSlotsPerStep);
        return new SlotStep.Move(donor, receiver, take(donor.slots(), count), imbalance - count);
    }

    /** Slots per master: 16384 split evenly, the first ones taking the remainder. */
    static int[] quotas(int masters) {
        int[] quota = new int[masters];
        for (int i = 0; i < masters; i++) {
            quota[i] = SLOTS / masters + (i < SLOTS % masters ? 1 : 0);
        }
        return quota;
    }

    private static Optional<SlotStep> openMigration(List<NodeState> nodes) {
        for (NodeState source : nodes) {
            for (Map.Entry<Integer, String> m : source.migrating().entrySet()) {
                NodeState target = byId(nodes, m.getValue());
                if (target != null) {
                    return Optional.of(new SlotStep.Move(source, target, slotsTo(source.migrating(), target.id()), 0));
                }
            }
        }
        for (NodeState target : nodes) {
            for (Map.Entry<Integer, String> m : target.importing().entrySet()) {
                NodeState source = byId(nodes, m.getValue());
                if (source != null && source.slots().get(m.getKey())) {
                    BitSet slots = slotsTo(target.importing(), source.id());
                    slots.and(source.slots());
                    return Optional.of(new SlotStep.Move(source, target, slots, 0));
                }
            }
        }
        return Optional.empty();
    }

    private static SlotStep assignUnserved(List<NodeState> members, int[] quota, BitSet served) {
        Map<NodeState, BitSet> plan = new LinkedHashMap<>();
        int slot = served.nextClearBit(0);
        for (NodeState m : members) {
            int want = quota[m.ordinal()] - m.slotCount();
            BitSet mine = new BitSet(SLOTS);
            while (want > 0 && slot < SLOTS) {
                mine.set(slot);
                want--;
                slot = served.nextClearBit(slot + 1);
            }
            if (!mine.isEmpty()) {
                plan.put(m, mine);
            }
        }
        // Members already over quota (an interrupted rebalance): the last member takes what is left.
        if (slot < SLOTS) {
            BitSet rest = plan.computeIfAbsent(members.get(members.size() - 1), k -> new BitSet(SLOTS));
            for (; slot < SLOTS; slot = served.nextClearBit(slot + 1)) {
                rest.set(slot);
            }
        }
        return new SlotStep.Assign(plan);
    }

    private static NodeState mostDeficit(List<NodeState> members, int[] quota) {
        return members.stream().max(Comparator.comparingInt(n -> quota[n.ordinal()] - n.slotCount())).orElseThrow();
    }

    /** The highest {@code count} slots, so a master keeps one contiguous low range. */
    private static BitSet take(BitSet slots, int count) {
        BitSet taken = new BitSet(SLOTS);
        for (int s = slots.previousSetBit(SLOTS - 1); s >= 0 && count > 0; s = slots.previousSetBit(s - 1), count--) {
            taken.set(s);
        }
        return taken;
    }

    private static BitSet slotsTo(Map<Integer, String> open, String peer) {
        BitSet slots = new BitSet(SLOTS);
        open.forEach((slot, id) -> {
            if (id.equals(peer)) {
                slots.set(slot);
            }
        });
        return slots;
    }

    private static NodeState byId(List<NodeState> nodes, String id) {
        return nodes.stream().filter(n -> n.id().equals(id)).findFirst().orElse(null);
    }
}
