package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * Drives the planner against a simulated cluster until it says Done, as the operator does against
 * real Redis: whatever the start, the end is the wanted masters, every slot served once, balanced.
 */
class SlotPlannerTest {

    /** A toy cluster that applies steps the way Redis would. */
    static final class Sim {
        final List<BitSet> slots = new ArrayList<>();
        final List<Set<Integer>> known = new ArrayList<>();
        final List<Integer> generation = new ArrayList<>();
        final Map<Integer, Integer> migrating = new HashMap<>(); // slot -> target ordinal, on its owner

        Sim(int pods) {
            for (int i = 0; i < pods; i++) {
                addPod();
            }
        }

        void addPod() {
            int i = slots.size();
            slots.add(new BitSet(SlotPlanner.SLOTS));
            known.add(new HashSet<>(Set.of(i)));
            generation.add(0);
        }

        String id(int i) {
            return "node" + i + "g" + generation.get(i);
        }

        List<NodeState> observe() {
            List<NodeState> out = new ArrayList<>();
            for (int i = 0; i < slots.size(); i++) {
                Set<String> ids = new HashSet<>();
                known.get(i).forEach(k -> ids.add(id(k)));
                Map<Integer, String> mig = new HashMap<>();
                for (var e : migrating.entrySet()) {
                    if (slots.get(i).get(e.getKey())) {
                        mig.put(e.getKey(), id(e.getValue()));
                    }
                }
                Map<String, String> addresses = new HashMap<>();
                known.get(i).stream().filter(k -> k != null).forEach(k -> addresses.put(id(k), "127.0.0.1:" + (7000 + k)));
                addresses.remove(id(i));
                out.add(new NodeState(new RedisNode(i, "127.0.0.1", 7000 + i), id(i), (BitSet) slots.get(i).clone(), mig,
                        Map.of(), ids, addresses));
            }
            return out;
        }

        /** Applies a step; gossip completes at once (mutual knowledge of every member). */
        void apply(SlotStep step) {
            switch (step) {
                case SlotStep.Meet m -> {
                    Set<Integer> all = new HashSet<>(known.get(m.via().ordinal()));
                    m.newcomers().forEach(n -> all.add(n.ordinal()));
                    for (int i : all) {
                        known.get(i).addAll(all);
                    }
                }
                case SlotStep.Assign a -> a.slots().forEach((n, s) -> slots.get(n.ordinal()).or(s));
                case SlotStep.Move mv -> {
                    BitSet moved = (BitSet) mv.slots().clone();
                    moved.and(slots.get(mv.source().ordinal()));
                    assertThat(moved).as("a move only takes slots the source serves").isEqualTo(mv.slots());
                    slots.get(mv.source().ordinal()).andNot(moved);
                    slots.get(mv.target().ordinal()).or(moved);
                    moved.stream().forEach(migrating::remove);
                }
                case SlotStep.Forget f -> f.removed().forEach(n -> {
                    int gone = n.ordinal();
                    known.forEach(k -> k.remove(gone));
                    known.set(gone, new HashSet<>(Set.of(gone)));
                    generation.set(gone, generation.get(gone) + 1);
                });
                default -> throw new AssertionError("unexpected " + step);
            }
        }

        int converge(int masters) {
            for (int steps = 0; steps < 1000; steps++) {
                SlotStep step = SlotPlanner.next(observe(), masters, 1024);
                if (step instanceof SlotStep.Done) {
                    return steps;
                }
                apply(step);
            }
            throw new AssertionError("did not converge");
        }

        void assertBalanced(int masters) {
            BitSet all = new BitSet();
            int total = 0;
            for (int i = 0; i < slots.size(); i++) {
                if (i >= masters) {
                    assertThat(slots.get(i).cardinality()).as("redis-" + i + " is being removed").isZero();
                    continue;
                }
                int n = slots.get(i).cardinality();
                assertThat(n).as("redis-" + i).isBetween(SlotPlanner.SLOTS / masters, SlotPlanner.SLOTS / masters + 1);
                assertThat(all.intersects(slots.get(i))).as("a slot served twice").isFalse();
                all.or(slots.get(i));
                total += n;
                for (int j = 0; j < masters; j++) {
                    assertThat(known.get(i)).contains(j);
                }
            }
            assertThat(total).isEqualTo(SlotPlanner.SLOTS);
        }
    }

    @Test
    void aNewClusterIsMetThenAssignedEvenly() {
        Sim sim = new Sim(3);
        SlotStep first = SlotPlanner.next(sim.observe(), 3, 1024);
        assertThat(first).isInstanceOf(SlotStep.Meet.class);
        sim.converge(3);
        sim.assertBalanced(3);
        assertThat(sim.slots.get(0).get(0)).isTrue();
        assertThat(sim.slots.get(2).get(SlotPlanner.SLOTS - 1)).isTrue();
    }

    @Test
    void growingFrom3To7MovesSlotsOntoTheNewMasters() {
        Sim sim = new Sim(3);
        sim.converge(3);
        for (int i = 0; i < 4; i++) {
            sim.addPod();
        }
        int steps = sim.converge(7);
        sim.assertBalanced(7);
        assertThat(steps).as("one Meet plus moves of at most 1024 slots").isGreaterThan(4);
    }

    @Test
    void shrinkingFrom7To3DrainsTheLeavingMastersAndForgetsThem() {
        Sim sim = new Sim(7);
        sim.converge(7);
        sim.converge(3);
        sim.assertBalanced(3);
        for (int i = 3; i < 7; i++) {
            for (int m = 0; m < 3; m++) {
                assertThat(sim.known.get(m)).as("redis-" + m + " still knows removed redis-" + i).doesNotContain(i);
            }
        }
    }

    @Test
    void theDrainedMastersAreForgottenTogetherSoTheyWaitForTheirClientsOnce() {
        Sim sim = new Sim(7);
        sim.converge(7);
        SlotStep step;
        while (!((step = SlotPlanner.next(sim.observe(), 3, 1024)) instanceof SlotStep.Forget)) {
            assertThat(step).as("drain first").isInstanceOf(SlotStep.Move.class);
            sim.apply(step);
        }
        SlotStep.Forget forget = (SlotStep.Forget) step;
        assertThat(forget.removed()).extracting(NodeState::ordinal).containsExactly(3, 4, 5, 6);
        assertThat(forget.members()).extracting(NodeState::ordinal).containsExactly(0, 1, 2);
        assertThat(forget.describe()).isEqualTo("removing redis-3, redis-4, redis-5, redis-6 from the cluster");
        sim.apply(step);
        assertThat(SlotPlanner.next(sim.observe(), 3, 1024)).isInstanceOf(SlotStep.Done.class);
    }

    @Test
    void aMigrationLeftOpenByACrashIsFinishedFirst() {
        Sim sim = new Sim(4);
        sim.converge(4);
        int slot = sim.slots.get(3).nextSetBit(0);
        sim.migrating.put(slot, 1);
        SlotStep step = SlotPlanner.next(sim.observe(), 4, 1024);
        assertThat(step).isInstanceOf(SlotStep.Move.class);
        SlotStep.Move move = (SlotStep.Move) step;
        assertThat(move.source().ordinal()).isEqualTo(3);
        assertThat(move.target().ordinal()).isEqualTo(1);
        assertThat(move.slots().stream().toArray()).containsExactly(slot);
        sim.apply(step);
        sim.converge(4);
        sim.assertBalanced(4);
    }

    @Test
    void aBalancedClusterNeedsNothing() {
        Sim sim = new Sim(5);
        sim.converge(5);
        assertThat(SlotPlanner.next(sim.observe(), 5, 1024)).isInstanceOf(SlotStep.Done.class);
    }

    @Test
    void aPartlyAssignedClusterGetsTheRest() {
        Sim sim = new Sim(3);
        SlotPlanner.next(sim.observe(), 3, 1024);
        sim.apply(SlotPlanner.next(sim.observe(), 3, 1024));
        sim.slots.get(0).set(0, 100);
        SlotStep step = SlotPlanner.next(sim.observe(), 3, 1024);
        assertThat(step).isInstanceOf(SlotStep.Assign.class);
        sim.converge(3);
        sim.assertBalanced(3);
    }

    @Test
    void aMasterListedAtTheAddressItHadBeforeItRestartedIsMetWhereItIsNow() {
        Sim sim = new Sim(3);
        sim.converge(3);
        List<NodeState> restarted = new ArrayList<>();
        for (NodeState n : sim.observe()) {
            // Every pod restarted with a new IP: redis-1 still lists redis-2 at its old one, unflagged.
            Map<String, String> addresses = new HashMap<>();
            for (NodeState o : sim.observe()) {
                addresses.put(o.id(), o.node().host() + ":" + o.node().port());
            }
            if (n.ordinal() == 1) {
                addresses.put(sim.id(2), "10.244.0.9:6379");
            }
            restarted.add(new NodeState(n.node(), n.id(), n.slots(), n.migrating(), n.importing(), n.known(), addresses));
        }

        SlotStep step = SlotPlanner.next(restarted, 3, 1024);

        assertThat(step).as("not Done: redis-1 cannot reach redis-2, though it says cluster_state:ok").isInstanceOf(SlotStep.Meet.class);
        SlotStep.Meet meet = (SlotStep.Meet) step;
        assertThat(meet.via().ordinal()).isEqualTo(1);
        assertThat(meet.newcomers()).extracting(NodeState::ordinal).containsExactly(2);
        assertThat(SlotPlanner.next(sim.observe(), 3, 1024)).as("every address current").isInstanceOf(SlotStep.Done.class);
    }

    @Test
    void theReadyMastersMeetWhereTheyAreNowWhileAnotherIsStillComing() {
        Sim sim = new Sim(3);
        sim.converge(3);
        List<NodeState> back = new ArrayList<>();
        for (NodeState n : sim.observe().subList(0, 2)) {
            // Every pod restarted with a new IP; redis-2 is not ready yet (its volume, its AOF).
            Map<String, String> addresses = new HashMap<>();
            for (NodeState o : sim.observe()) {
                addresses.put(o.id(), "10.244.1." + o.ordinal() + ":6379");
            }
            addresses.remove(n.id());
            // Past the node timeout each suspects the others (fail?): listed where they were, no longer known.
            back.add(new NodeState(n.node(), n.id(), n.slots(), n.migrating(), n.importing(), Set.of(n.id()), addresses));
        }

        SlotStep.Meet meet = SlotPlanner.meetMoved(back, 3).orElseThrow();

        assertThat(meet.via().ordinal()).isEqualTo(0);
        assertThat(meet.newcomers()).as("only the masters that are back, where they are now").extracting(NodeState::ordinal)
                .containsExactly(1);
        assertThat(SlotPlanner.meetMoved(sim.observe().subList(0, 2), 3)).as("every address current").isEmpty();
    }

    @Test
    void aMasterFlaggedAsFailingWhereItIsNowIsWaitedForNotMetAgain() {
        Sim sim = new Sim(3);
        sim.converge(3);
        List<NodeState> flagged = new ArrayList<>();
        for (NodeState n : sim.observe()) {
            Map<String, String> addresses = new HashMap<>();
            Set<String> known = new HashSet<>(n.known());
            for (NodeState o : sim.observe()) {
                if (o != n && o.ordinal() != n.ordinal()) {
                    addresses.put(o.id(), o.node().host() + ":" + o.node().port());
                }
            }
            if (n.ordinal() == 0) {
                // redis-1 came back and was met at its new address, but redis-0 and redis-2 had marked it failed:
                // Redis keeps that flag on a master with slots for twice the node timeout.
                known.remove(sim.id(1));
            }
            flagged.add(new NodeState(n.node(), n.id(), n.slots(), n.migrating(), n.importing(), known, addresses));
        }

        SlotStep step = SlotPlanner.next(flagged, 3, 1024);

        assertThat(step).as("a meet changes nothing here: wait for the flag to clear").isInstanceOf(SlotStep.AwaitGossip.class);
        assertThat(step.describe()).contains("redis-0 still flags redis-1 as failing");
        assertThat(SlotPlanner.meetMoved(flagged, 3)).isEmpty();
    }

    @Test
    void aMasterListedWithoutAnAddressIsMetWhereItIsNow() {
        Sim sim = new Sim(3);
        sim.converge(3);
        List<NodeState> nodes = new ArrayList<>(sim.observe());
        NodeState n = nodes.get(2);
        Map<String, String> addresses = new HashMap<>(n.addresses());
        // noaddr: another pod answered at its old IP with another id, so redis-2 dropped the address.
        addresses.put(sim.id(0), ":6379");
        Set<String> known = new HashSet<>(n.known());
        known.remove(sim.id(0));
        nodes.set(2, new NodeState(n.node(), n.id(), n.slots(), n.migrating(), n.importing(), known, addresses));

        SlotStep.Meet meet = (SlotStep.Meet) SlotPlanner.next(nodes, 3, 1024);

        assertThat(meet.via().ordinal()).isEqualTo(2);
        assertThat(meet.newcomers()).extracting(NodeState::ordinal).containsExactly(0);
    }

    @Test
    void aDrainingPodListedAtAnOldAddressIsMetByAMemberNeverTheOtherWayRound() {
        Sim sim = new Sim(4);
        sim.converge(4);
        List<NodeState> nodes = new ArrayList<>();
        for (NodeState n : sim.observe()) {
            // Every pod restarted during a scale-down 4 -> 3: redis-3 still holds slots and lists everyone at old IPs.
            Map<String, String> addresses = new HashMap<>();
            n.addresses().keySet().forEach(id -> addresses.put(id, "10.244.9.9:6379"));
            nodes.add(new NodeState(n.node(), n.id(), n.slots(), n.migrating(), n.importing(), n.known(), addresses));
        }

        SlotStep.Meet meet = SlotPlanner.meetMoved(nodes, 3).orElseThrow();

        assertThat(meet.via().ordinal()).isLessThan(3);
        assertThat(meet.newcomers()).extracting(NodeState::ordinal).contains(3);
        assertThat(SlotPlanner.meetMoved(nodes.subList(3, 4), 3)).as("redis-3 alone meets nobody").isEmpty();
    }

    @Test
    void aPodNeverListedIsMet() {
        Sim sim = new Sim(3);
        sim.converge(3);
        sim.addPod();

        SlotStep step = SlotPlanner.next(sim.observe(), 4, 1024);

        assertThat(step).isInstanceOf(SlotStep.Meet.class);
        assertThat(((SlotStep.Meet) step).newcomers()).extracting(NodeState::ordinal).containsExactly(3);
    }

    @Test
    void quotasSplit16384Evenly() {
        assertThat(SlotPlanner.quotas(3)).containsExactly(5462, 5461, 5461);
        assertThat(java.util.Arrays.stream(SlotPlanner.quotas(11)).sum()).isEqualTo(16384);
    }
}
