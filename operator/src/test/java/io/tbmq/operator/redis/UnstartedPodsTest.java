package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** A scale-up from 3 to 5 Redis masters whose two new pods never started, and the spec edited back to 3. */
class UnstartedPodsTest {
    private static NodeState master(int ordinal, int from, int to, Map<Integer, String> migrating) {
        BitSet slots = new BitSet(SlotPlanner.SLOTS);
        slots.set(from, to);
        return new NodeState(new RedisNode(ordinal, "10.0.0." + ordinal, 6379), "n" + ordinal, slots, migrating, Map.of(),
                Set.of("n0", "n1", "n2"));
    }

    private static List<NodeState> threeMastersServingEverySlot() {
        return List.of(master(0, 0, 5462, Map.of()), master(1, 5462, 10923, Map.of()), master(2, 10923, SlotPlanner.SLOTS, Map.of()));
    }

    @Test
    void podsThatNeverStartedGoWhenTheMastersBelowThemServeEverySlot() {
        assertThat(UnstartedPods.replicasToKeep(3, 5, threeMastersServingEverySlot(), i -> i < 3)).isEqualTo(3);
    }

    @Test
    void aPodThatStartedStaysAndSoDoesEveryPodBelowIt() {
        // redis-4 started (it may have been met and hold slots): it and redis-3 wait for the drain.
        assertThat(UnstartedPods.replicasToKeep(3, 5, threeMastersServingEverySlot(), i -> i != 3)).isEqualTo(5);
        // redis-3 started, redis-4 did not: only redis-4 goes.
        assertThat(UnstartedPods.replicasToKeep(3, 5, threeMastersServingEverySlot(), i -> i != 4)).isEqualTo(4);
    }

    @Test
    void nothingGoesWhileSomeSlotsAreServedByNoPodThatAnswers() {
        // redis-1 does not answer: its slots may be those a pod that is gone served once.
        List<NodeState> withoutOne = List.of(master(0, 0, 5462, Map.of()), master(2, 10923, SlotPlanner.SLOTS, Map.of()));
        assertThat(UnstartedPods.replicasToKeep(3, 5, withoutOne, i -> i < 3)).isEqualTo(5);
        // A master that lost its slots to a node no pod runs (an old member of redis-4) serves less than all.
        List<NodeState> short1 = List.of(master(0, 0, 5000, Map.of()), master(1, 5462, 10923, Map.of()),
                master(2, 10923, SlotPlanner.SLOTS, Map.of()));
        assertThat(UnstartedPods.replicasToKeep(3, 5, short1, i -> i < 3)).isEqualTo(5);
    }

    @Test
    void nothingGoesWhileTheClusterListsANodeNoAnsweringPodIs() {
        // redis-3 was met once and holds nothing now, but its node would be left listed (failing) by the others.
        List<NodeState> knowsAnother = List.of(master(0, 0, 5462, Map.of()), master(1, 5462, 10923, Map.of()),
                new NodeState(new RedisNode(2, "10.0.0.2", 6379), "n2", slots(10923, SlotPlanner.SLOTS), Map.of(), Map.of(),
                        Set.of("n0", "n1", "n2", "n3")));
        assertThat(UnstartedPods.replicasToKeep(3, 5, knowsAnother, i -> i < 3)).isEqualTo(5);
    }

    private static BitSet slots(int from, int to) {
        BitSet slots = new BitSet(SlotPlanner.SLOTS);
        slots.set(from, to);
        return slots;
    }

    @Test
    void nothingGoesWhileASlotIsOnItsWay() {
        List<NodeState> moving = List.of(master(0, 0, 5462, Map.of(7, "n4")), master(1, 5462, 10923, Map.of()),
                master(2, 10923, SlotPlanner.SLOTS, Map.of()));
        assertThat(UnstartedPods.replicasToKeep(3, 5, moving, i -> i < 3)).isEqualTo(5);
    }

    @Test
    void aScaleUpUnderWayIsLeftAlone() {
        assertThat(UnstartedPods.replicasToKeep(5, 5, threeMastersServingEverySlot(), i -> i < 3)).isEqualTo(5);
    }
}
