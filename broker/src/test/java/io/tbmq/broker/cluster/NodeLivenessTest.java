package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/** What a node can say of another from tbmq.cluster.nodes: the janitor acts only on nodes it has heard of. */
class NodeLivenessTest {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aNodeNeverHeardOfIsUnknownThoughItCountsAsNotAlive() throws Exception {
        NodeLiveness liveness = new NodeLiveness("node-a", Duration.ofMillis(50));
        Thread.sleep(120);
        // A starting node creates its downlink topics before its first heartbeat: it must not look gone for good.
        assertThat(liveness.known("node-b")).isFalse();
        assertThat(liveness.alive("node-b")).isFalse();
        assertThat(liveness.known("node-a")).isTrue();
    }

    @Test
    void aHeartbeatOrALeavingMakesANodeKnown() throws Exception {
        // Long enough that a first call's class loading on a busy machine does not outlast it.
        NodeLiveness liveness = new NodeLiveness("node-a", Duration.ofMillis(1_000));
        liveness.record(bytes("node-b"), bytes("hb"));
        liveness.record(bytes("node-c"), null);
        assertThat(liveness.known("node-b")).isTrue();
        assertThat(liveness.alive("node-b")).isTrue();
        assertThat(liveness.known("node-c")).isTrue();
        assertThat(liveness.alive("node-c")).isFalse();
        Thread.sleep(1_300);
        assertThat(liveness.goneForNanos("node-b")).isGreaterThanOrEqualTo(Duration.ofMillis(250).toNanos());
    }

    @Test
    void theMovesOtherLiveNodesReportAreTheirLatestRecentHeartbeats() throws Exception {
        NodeLiveness liveness = new NodeLiveness("node-a", Duration.ofSeconds(2));
        long now = System.currentTimeMillis();
        liveness.record(bytes("node-a"), bytes(now + " moving 12 16"));
        liveness.record(bytes("node-b"), bytes(now + " moving 12 16"));
        liveness.record(bytes("node-c"), bytes(now + " moving 12 16"));
        liveness.record(bytes("node-c"), bytes(Long.toString(now)));
        liveness.record(bytes("node-d"), bytes(now + " moving 8 12"));
        liveness.record(bytes("node-d"), null);
        // The last heartbeat of a node that died moving, read again by a node starting a minute later.
        liveness.record(bytes("node-e"), bytes((now - 60_000) + " moving 12 16"));
        assertThat(liveness.movesUnderWay()).as("not its own; not c's, ended; not d's, left; not e's, stale")
                .containsOnlyKeys("node-b").containsEntry("node-b", new io.tbmq.broker.record.NodeHeartbeat(now, 12, 16));
        assertThat(liveness.alive("node-e")).as("heard, so alive until the timeout").isTrue();
        liveness.caughtUp();
        // Read live, it was just sent, whatever the writer's clock says.
        liveness.record(bytes("node-f"), bytes((now - 60_000) + " moving 12 16"));
        assertThat(liveness.movesUnderWay()).containsOnlyKeys("node-b", "node-f");
        Thread.sleep(2_200);
        assertThat(liveness.movesUnderWay()).as("b and f silent past the timeout").isEmpty();
    }

    @Test
    void anotherProcessWithThisNodesIdCountsOnlyWhenHeardAfterCatchingUp() throws Exception {
        NodeLiveness liveness = new NodeLiveness("node-a", "me", Duration.ofMillis(1_000));
        long now = System.currentTimeMillis();
        // The last heartbeat of the process this one replaces, read while catching up.
        liveness.record(bytes("node-a"), bytes(now + " incarnation before"));
        liveness.record(bytes("node-b"), bytes(now + " incarnation other"));
        liveness.caughtUp();
        assertThat(liveness.otherProcessWithOwnId()).as("a predecessor, for all this node knows yet").isEmpty();
        liveness.record(bytes("node-a"), bytes(now + " incarnation me"));
        liveness.record(bytes("node-b"), bytes(now + " incarnation b-again"));
        assertThat(liveness.otherProcessWithOwnId()).as("its own and other nodes' heartbeats").isEmpty();
        assertThat(liveness.otherProcessHeartbeats()).isZero();
        liveness.record(bytes("node-a"), bytes((now + 1) + " incarnation twin"));
        assertThat(liveness.otherProcessWithOwnId()).hasValue(io.tbmq.broker.record.NodeHeartbeat.idle(now + 1).from("twin"));
        liveness.record(bytes("node-a"), bytes(Long.toString(now + 2)));
        assertThat(liveness.otherProcessWithOwnId()).as("one of an earlier version, which names no process")
                .hasValueSatisfying(h -> assertThat(h.incarnation()).isNull());
        assertThat(liveness.otherProcessHeartbeats()).isEqualTo(2);
        Thread.sleep(1_200);
        assertThat(liveness.otherProcessWithOwnId()).as("silent for a node timeout").isEmpty();
        assertThat(liveness.otherProcessHeartbeats()).as("counted all the same").isEqualTo(2);
    }

    @Test
    void aStartingNodeListensForAnotherProcessUntilTheOthersWouldCountTheLastOneOfItsIdDead() {
        Duration interval = Duration.ofSeconds(2);
        long now = 1_700_000_000_000L;
        NodeLiveness fresh = new NodeLiveness("node-a", "me", Duration.ofSeconds(10));
        assertThat(fresh.waitForTwin(interval, now)).as("nothing of its id").isZero();
        fresh.record(bytes("node-a"), bytes((now - 1_000) + " incarnation before"));
        assertThat(fresh.waitForTwin(interval, now)).as("a node timeout after it was sent").isEqualTo(Duration.ofSeconds(9));
        assertThat(fresh.waitForTwin(interval, now + 5_000)).isEqualTo(Duration.ofSeconds(4));
        assertThat(fresh.waitForTwin(interval, now + 60_000)).as("long ago, or a writer's clock behind: two intervals")
                .isEqualTo(Duration.ofSeconds(4));
        assertThat(fresh.waitForTwin(interval, now - 60_000)).as("a writer's clock ahead: one node timeout")
                .isEqualTo(Duration.ofSeconds(10));
        fresh.record(bytes("node-a"), null);
        assertThat(fresh.waitForTwin(interval, now)).as("it left").isZero();
        fresh.record(bytes("node-a"), bytes((now - 1_000) + " incarnation me"));
        assertThat(fresh.waitForTwin(interval, now)).as("its own (a record read twice)").isZero();
        fresh.record(bytes("node-a"), bytes(Long.toString(now - 1_000)));
        assertThat(fresh.waitForTwin(interval, now)).as("an earlier version's, which names no process")
                .isEqualTo(Duration.ofSeconds(9));
        NodeLiveness anonymous = new NodeLiveness("node-a", Duration.ofSeconds(10));
        anonymous.record(bytes("node-a"), bytes((now - 1_000) + " incarnation before"));
        assertThat(anonymous.waitForTwin(interval, now)).as("a process that names itself nothing checks nothing").isZero();
    }

    @Test
    void aStartingNodeCountsAsAliveButIsNotTheCaretakerUntilItsHeartbeatsSayItStarted() {
        NodeLiveness b = new NodeLiveness("node-b", "me", Duration.ofSeconds(10));
        long now = System.currentTimeMillis();
        b.caughtUp();
        b.record(bytes("node-b"), bytes(now + " incarnation me"));
        b.record(bytes("node-a"), bytes(now + " incarnation a1 phase starting"));
        assertThat(b.alive("node-a")).as("its sessions are left to it").isTrue();
        assertThat(b.starting("node-a")).isTrue();
        assertThat(b.aliveNodes()).containsExactly("node-a", "node-b");
        assertThat(b.isCaretaker()).as("node-a has the lowest id, but has not read its sessions yet").isTrue();
        b.record(bytes("node-a"), bytes((now + 2_000) + " incarnation a1"));
        assertThat(b.starting("node-a")).isFalse();
        assertThat(b.isCaretaker()).as("node-a started").isFalse();
        b.record(bytes("node-a"), null);
        assertThat(b.isCaretaker()).as("node-a left").isTrue();
    }

    @Test
    void aNodeTakesItselfForCaretakerOnlyAHandoverAfterItsOwnHeartbeatSayingItStartedIsBack() throws Exception {
        NodeLiveness a = new NodeLiveness("node-a", "me", Duration.ofSeconds(10), Duration.ofMillis(300));
        long now = System.currentTimeMillis();
        a.record(bytes("node-b"), bytes(now + " incarnation b1"));
        a.caughtUp();
        a.record(bytes("node-a"), bytes(now + " incarnation me phase starting"));
        assertThat(a.isCaretaker()).as("node-b still is, for the others too").isFalse();
        Thread.sleep(400);
        assertThat(a.isCaretaker()).as("still starting").isFalse();
        a.record(bytes("node-a"), bytes((now + 2_000) + " incarnation me"));
        // node-b stopped acting when it read that heartbeat; what it adopted just before reaches node-a meanwhile.
        assertThat(a.isCaretaker()).as("right after node-b stopped").isFalse();
        Thread.sleep(400);
        assertThat(a.isCaretaker()).isTrue();
        a.record(bytes("node-a"), bytes((now + 4_000) + " incarnation me"));
        assertThat(a.isCaretaker()).as("from then on").isTrue();
    }

    @Test
    void anotherProcessWithThisNodesIdNeitherMakesItStartingNorKeepsItsViewCurrent() throws Exception {
        NodeLiveness a = new NodeLiveness("node-a", "me", Duration.ofMillis(1_000));
        long now = System.currentTimeMillis();
        a.caughtUp();
        a.record(bytes("node-a"), bytes(now + " incarnation me"));
        a.record(bytes("node-b"), bytes(now + " incarnation b1"));
        a.record(bytes("node-a"), bytes(now + " incarnation twin phase starting"));
        assertThat(a.starting("node-a")).isFalse();
        assertThat(a.isCaretaker()).isTrue();
        assertThat(a.viewIsCurrent()).isTrue();
        Thread.sleep(600);
        a.record(bytes("node-a"), bytes((now + 600) + " incarnation twin"));
        assertThat(a.viewIsCurrent()).as("its own heartbeats stopped coming back, only the other's do").isFalse();
    }

    @Test
    void aProcessRestartedInThePodOfItsPredecessorDoesNotWait() {
        Duration interval = Duration.ofSeconds(2);
        long now = 1_700_000_000_000L;
        NodeLiveness restarted = new NodeLiveness("node-a", "me", Duration.ofSeconds(10));
        restarted.record(bytes("node-a"), bytes((now - 1_000) + " incarnation before pod uid-1"));
        assertThat(restarted.waitForTwin(interval, now, "uid-1")).as("the pod's previous container, which exited").isZero();
        assertThat(restarted.predecessorInPod("uid-1")).isTrue();
        assertThat(restarted.waitForTwin(interval, now, "uid-2")).as("another pod: it may still run").isEqualTo(Duration.ofSeconds(9));
        assertThat(restarted.waitForTwin(interval, now, null)).as("outside Kubernetes").isEqualTo(Duration.ofSeconds(9));
        restarted.record(bytes("node-a"), bytes((now - 500) + " incarnation twin"));
        assertThat(restarted.waitForTwin(interval, now, "uid-1")).as("the last came from a process in no pod")
                .isEqualTo(Duration.ofMillis(9_500));
        assertThat(restarted.predecessorInPod("uid-1")).isFalse();
        restarted.record(bytes("node-a"), bytes((now - 200) + " incarnation before pod uid-1"));
        assertThat(restarted.waitForTwin(interval, now, "uid-1")).as("the last from this pod, but another process wrote just before")
                .isEqualTo(Duration.ofMillis(9_500));
        assertThat(restarted.waitForTwin(interval, now + 60_000, "uid-1")).as("that other one silent for long").isZero();
        restarted.record(bytes("node-a"), null);
        restarted.record(bytes("node-a"), bytes((now - 100) + " incarnation again pod uid-1"));
        assertThat(restarted.waitForTwin(interval, now, "uid-1")).as("after a leaving, only this pod's").isZero();
    }
}
