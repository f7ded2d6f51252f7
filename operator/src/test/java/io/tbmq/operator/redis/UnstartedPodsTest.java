package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** A scale-up from 3 to 5 Redis masters whose new pods never joined, and the spec edited back to 3. */
class UnstartedPodsTest {
    private static BitSet slots(int from, int to) {
        BitSet slots = new BitSet(SlotPlanner.SLOTS);
        slots.set(from, to);
        return slots;
    }

    private static NodeState node(int ordinal, BitSet slots, Map<Integer, String> migrating, Set<String> known,
            Map<String, String> addresses) {
        return new NodeState(new RedisNode(ordinal, "10.0.0." + ordinal, 6379), "n" + ordinal, slots, migrating, Map.of(), known,
                addresses);
    }

    private static NodeState master(int ordinal, int from, int to) {
        Map<String, String> others = new java.util.HashMap<>(Map.of("n0", "10.0.0.0:6379", "n1", "10.0.0.1:6379", "n2", "10.0.0.2:6379"));
        others.remove("n" + ordinal);
        return node(ordinal, slots(from, to), Map.of(), Set.of("n0", "n1", "n2"), others);
    }

    private static List<NodeState> threeMastersServingEverySlot() {
        return new ArrayList<>(List.of(master(0, 0, 5462), master(1, 5462, 10923), master(2, 10923, SlotPlanner.SLOTS)));
    }

    @Test
    void podsNobodyMetGoWhenTheMastersToKeepServeEverySlot() {
        assertThat(UnstartedPods.replicasToKeep(3, 5, threeMastersServingEverySlot())).isEqualTo(3);
    }

    @Test
    void aNewPodThatRunsButWasNeverMetGoesToo() {
        // Parallel pods: redis-4 got the room, redis-3 did not; redis-4 answers, alone.
        List<NodeState> answering = threeMastersServingEverySlot();
        answering.add(node(4, new BitSet(), Map.of(), Set.of("n4"), Map.of()));
        assertThat(UnstartedPods.replicasToKeep(3, 5, answering)).isEqualTo(3);
    }

    @Test
    void aNewPodTheMastersListKeepsEveryPodForTheDrain() {
        List<NodeState> answering = new ArrayList<>(List.of(master(0, 0, 5462), master(1, 5462, 10923),
                node(2, slots(10923, SlotPlanner.SLOTS), Map.of(), Set.of("n0", "n1", "n2", "n4"),
                        Map.of("n0", "10.0.0.0:6379", "n1", "10.0.0.1:6379", "n4", "10.0.0.4:6379"))));
        assertThat(UnstartedPods.replicasToKeep(3, 5, answering)).isEqualTo(5);
    }

    @Test
    void aMemberListedOnlyAsFailedKeepsEveryPodToo() {
        // A departed member flagged fail is in CLUSTER NODES but not among the nodes reached.
        List<NodeState> answering = new ArrayList<>(List.of(master(0, 0, 5462), master(1, 5462, 10923),
                node(2, slots(10923, SlotPlanner.SLOTS), Map.of(), Set.of("n0", "n1", "n2"),
                        Map.of("n0", "10.0.0.0:6379", "n1", "10.0.0.1:6379", "n3", "10.0.0.3:6379"))));
        assertThat(UnstartedPods.replicasToKeep(3, 5, answering)).isEqualTo(5);
    }

    @Test
    void nothingGoesWhileSomeSlotsAreServedByNoMasterThatAnswers() {
        List<NodeState> withoutOne = List.of(master(0, 0, 5462), master(2, 10923, SlotPlanner.SLOTS));
        assertThat(UnstartedPods.replicasToKeep(3, 5, withoutOne)).isEqualTo(5);
        List<NodeState> lessThanAll = List.of(master(0, 0, 5000), master(1, 5462, 10923), master(2, 10923, SlotPlanner.SLOTS));
        assertThat(UnstartedPods.replicasToKeep(3, 5, lessThanAll)).isEqualTo(5);
    }

    @Test
    void nothingGoesWhileASlotIsOnItsWay() {
        List<NodeState> moving = List.of(node(0, slots(0, 5462), Map.of(7, "n1"), Set.of("n0", "n1", "n2"), Map.of()),
                master(1, 5462, 10923), master(2, 10923, SlotPlanner.SLOTS));
        assertThat(UnstartedPods.replicasToKeep(3, 5, moving)).isEqualTo(5);
    }

    @Test
    void aScaleUpUnderWayIsLeftAlone() {
        assertThat(UnstartedPods.replicasToKeep(5, 5, threeMastersServingEverySlot())).isEqualTo(5);
    }
}
