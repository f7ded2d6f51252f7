package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class ClusterInfoTest {

    private static String reply(String state, int assigned) {
        // As Redis 7 sends it: CRLF-terminated fields.
        return "cluster_state:" + state + "\r\ncluster_slots_assigned:" + assigned + "\r\ncluster_slots_ok:" + assigned
                + "\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:3\r\ncluster_size:3\r\n";
    }

    @Test
    void aMasterThatReachesTheClusterButHasNotHeardEveryOwnerIsNotReadyYet() {
        // With cluster-require-full-coverage no, Redis says ok before gossip has brought every slot's owner.
        ClusterInfo info = ClusterInfo.parse(reply("ok", 10923));
        assertThat(info.stateOk()).isTrue();
        assertThat(info.knowsEveryOwner()).isFalse();
        assertThat(info.lack()).contains("10923 of 16384");
    }

    @Test
    void everyOwnerKnownAndStateOkIsReady() {
        ClusterInfo info = ClusterInfo.parse(reply("ok", 16384));
        assertThat(info.knowsEveryOwner()).isTrue();
        assertThat(info.slotsAssigned()).isEqualTo(16384);
    }

    @Test
    void aNodeInTheMinorityIsNotReadyThoughItKnowsEveryOwner() {
        ClusterInfo info = ClusterInfo.parse(reply("fail", 16384));
        assertThat(info.knowsEveryOwner()).isFalse();
        assertThat(info.lack()).contains("cluster_state:ok");
    }

    @Test
    void slotsOfAFailedMasterStillCountAsOwned() {
        // Its slots keep their owner while it restarts: the rest of the cluster stays ready to serve its own.
        String reply = "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:10923\r\ncluster_slots_pfail:0\r\n"
                + "cluster_slots_fail:5461\r\n";
        assertThat(ClusterInfo.parse(reply).knowsEveryOwner()).isTrue();
    }

    private static NodeState node(int ordinal, Map<Integer, String> migrating, Map<Integer, String> importing) {
        return new NodeState(new RedisNode(ordinal, "127.0.0.1", 7000 + ordinal), "n" + ordinal, new BitSet(), migrating, importing,
                Set.of("n0", "n1"));
    }

    @Test
    void aNewMoveWaitsUntilTheTargetKnowsEveryOwner() {
        SlotStep.Move move = new SlotStep.Move(node(0, Map.of(), Map.of()), node(1, Map.of(), Map.of()), new BitSet(), 100);
        assertThat(ClusterInfo.parse(reply("ok", 10923)).mayReceive(move)).isFalse();
        assertThat(ClusterInfo.parse(reply("ok", 16384)).mayReceive(move)).isTrue();
    }

    @Test
    void aMigrationAlreadyOpenIsFinishedOnceTheTargetReachesTheCluster() {
        // Its slots are half-moved meanwhile; an unowned slot elsewhere is fixed only after it.
        SlotStep.Move finish = new SlotStep.Move(node(0, Map.of(42, "n1"), Map.of()), node(1, Map.of(), Map.of(42, "n0")),
                new BitSet(), 0);
        assertThat(ClusterInfo.parse(reply("ok", 16000)).mayReceive(finish)).isTrue();
        assertThat(ClusterInfo.parse(reply("fail", 16384)).mayReceive(finish)).isFalse();
    }
}
