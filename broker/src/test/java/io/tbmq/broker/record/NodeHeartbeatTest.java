package io.tbmq.broker.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class NodeHeartbeatTest {

    private static NodeHeartbeat decode(String text) {
        return NodeHeartbeat.decode(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aMoveUnderWayIsWrittenAndReadBack() {
        NodeHeartbeat moving = new NodeHeartbeat(1_700_000_000_000L, 12, 16);
        assertThat(new String(moving.encode(), StandardCharsets.UTF_8)).isEqualTo("1700000000000 moving 12 16");
        assertThat(NodeHeartbeat.decode(moving.encode())).isEqualTo(moving);
        assertThat(NodeHeartbeat.decode(moving.encode()).moving()).isTrue();
    }

    @Test
    void aNodeNotMovingWritesWhatEarlierVersionsWrote() {
        assertThat(new String(NodeHeartbeat.idle(1_700_000_000_000L).encode(), StandardCharsets.UTF_8)).isEqualTo("1700000000000");
        assertThat(decode("1700000000000")).isEqualTo(NodeHeartbeat.idle(1_700_000_000_000L));
    }

    @Test
    void fieldsALaterVersionAddsAreSkipped() {
        assertThat(decode("12 moving 2 4 something-new")).isEqualTo(new NodeHeartbeat(12, 2, 4));
    }

    @Test
    void whatItCannotReadIsAHeartbeatOfANodeNotMoving() {
        for (String odd : new String[] { "hb", "", "12 moving", "12 moving x 16", "12 moving 16 12", "12 moving 0 4",
                "12 growing 2 4" }) {
            assertThat(decode(odd).moving()).as("'%s'", odd).isFalse();
        }
    }

    @Test
    void theSendingProcessFollowsTheMoveWhereEarlierVersionsReadNothing() {
        NodeHeartbeat moving = new NodeHeartbeat(12, 2, 4).from("a1b2");
        assertThat(new String(moving.encode(), StandardCharsets.UTF_8)).isEqualTo("12 moving 2 4 incarnation a1b2");
        assertThat(NodeHeartbeat.decode(moving.encode())).isEqualTo(moving);
        NodeHeartbeat idle = NodeHeartbeat.idle(12).from("a1b2");
        assertThat(new String(idle.encode(), StandardCharsets.UTF_8)).isEqualTo("12 incarnation a1b2");
        assertThat(NodeHeartbeat.decode(idle.encode())).isEqualTo(idle);
        assertThat(idle.moving()).isFalse();
        // Earlier versions read a move from the second to the fourth field only: "12 incarnation a1b2" is not one.
        assertThat(decode("12 moving x 16 incarnation a1b2")).isEqualTo(NodeHeartbeat.idle(12).from("a1b2"));
        assertThat(decode("12 incarnation a1b2 something new")).isEqualTo(NodeHeartbeat.idle(12).from("a1b2"));
        assertThat(decode("12 moving 2 4").incarnation()).as("an earlier version's").isNull();
        assertThat(decode("12 incarnation").incarnation()).isNull();
    }

    @Test
    void aStartingProcessSaysSoAfterEverythingEarlierVersionsRead() {
        NodeHeartbeat starting = NodeHeartbeat.idle(12).from("a1b2").whileStarting();
        assertThat(new String(starting.encode(), StandardCharsets.UTF_8)).isEqualTo("12 incarnation a1b2 phase starting");
        assertThat(NodeHeartbeat.decode(starting.encode())).isEqualTo(starting);
        assertThat(starting.starting()).isTrue();
        NodeHeartbeat movingWhileStarting = new NodeHeartbeat(12, 2, 4).from("a1b2").whileStarting();
        assertThat(new String(movingWhileStarting.encode(), StandardCharsets.UTF_8)).isEqualTo("12 moving 2 4 incarnation a1b2 phase starting");
        assertThat(NodeHeartbeat.decode(movingWhileStarting.encode())).isEqualTo(movingWhileStarting);
        assertThat(NodeHeartbeat.idle(12).from("a1b2").starting()).as("once started").isFalse();
        assertThat(decode("12 incarnation a1b2").starting()).as("an earlier version's").isFalse();
        assertThat(decode("12 incarnation a1b2 phase").starting()).isFalse();
        assertThat(decode("12 incarnation a1b2 phase draining").starting()).as("a phase a later version may add").isFalse();
        assertThat(decode("12 phase starting incarnation a1b2")).as("in any order after the move")
                .isEqualTo(NodeHeartbeat.idle(12).from("a1b2").whileStarting());
    }

    @Test
    void aProcessInAPodNamesItAfterItsIncarnation() {
        NodeHeartbeat inPod = NodeHeartbeat.idle(12).from("a1b2").inPod("9f1c-77").whileStarting();
        assertThat(new String(inPod.encode(), StandardCharsets.UTF_8)).isEqualTo("12 incarnation a1b2 pod 9f1c-77 phase starting");
        assertThat(NodeHeartbeat.decode(inPod.encode())).isEqualTo(inPod);
        assertThat(NodeHeartbeat.idle(12).from("a1b2").inPod(null).encode()).isEqualTo("12 incarnation a1b2".getBytes(StandardCharsets.UTF_8));
        assertThat(decode("12 incarnation a1b2").pod()).as("outside Kubernetes, or an earlier version's").isNull();
    }

    @Test
    void aNamedClusterIsNamedLastWhereEarlierVersionsSkipIt() {
        NodeHeartbeat named = new NodeHeartbeat(12, 2, 4).from("a1b2").inPod("9f1c-77").whileStarting().ofCluster("plant-7/tbmq");
        assertThat(new String(named.encode(), StandardCharsets.UTF_8))
                .isEqualTo("12 moving 2 4 incarnation a1b2 pod 9f1c-77 phase starting cluster plant-7/tbmq");
        assertThat(NodeHeartbeat.decode(named.encode())).isEqualTo(named);
        assertThat(named.cluster()).isEqualTo("plant-7/tbmq");
        // The fields before it read as they did without it.
        assertThat(decode("12 moving 2 4 incarnation a1b2 pod 9f1c-77 phase starting cluster plant-7/tbmq").ofCluster(null))
                .isEqualTo(new NodeHeartbeat(12, 2, 4).from("a1b2").inPod("9f1c-77").whileStarting());
        assertThat(NodeHeartbeat.idle(12).from("a1b2").ofCluster(null).encode()).isEqualTo("12 incarnation a1b2".getBytes(StandardCharsets.UTF_8));
        assertThat(decode("12 incarnation a1b2").cluster()).as("unnamed, or an earlier version's").isNull();
        assertThat(decode("12 incarnation a1b2 cluster").cluster()).isNull();
    }
}
