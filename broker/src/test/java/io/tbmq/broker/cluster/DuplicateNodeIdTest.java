package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

/** A second broker process with a node's id: refused at its start. */
class DuplicateNodeIdTest {
    private static final Duration INTERVAL = Duration.ofMillis(200);
    private static final Duration NODE_TIMEOUT = Duration.ofMillis(1_000);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static NodeLiveness caughtUpAfter(String lastOfOwnId) {
        NodeLiveness liveness = new NodeLiveness("node-a", "me", NODE_TIMEOUT);
        liveness.record(bytes("node-a"), lastOfOwnId == null ? null : bytes(lastOfOwnId));
        liveness.caughtUp();
        return liveness;
    }

    private static Duration timed(ThrowingRunnable check) throws Exception {
        long started = System.nanoTime();
        check.run();
        return Duration.ofNanos(System.nanoTime() - started);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aNodeWhoseIdAnotherLiveProcessSendsDoesNotStart() throws Exception {
        NodeLiveness liveness = caughtUpAfter(System.currentTimeMillis() + " incarnation other");
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", liveness);
        // The other process's next heartbeat, one interval later.
        CompletableFuture.delayedExecutor(INTERVAL.toMillis(), TimeUnit.MILLISECONDS).execute(
                () -> liveness.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation other")));
        Duration took = timed(() -> assertThatThrownBy(() -> duplicate.checkBeforeJoining(INTERVAL, () -> false))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("another broker process (other,")
                .hasMessageContaining("runs with node id node-a, so this one does not start")
                .hasMessageContaining("tbmq.node-id"));
        assertThat(took).as("refused as soon as it heard the other").isLessThan(NODE_TIMEOUT);
    }

    @Test
    void aNodeRestartedAfterACrashStartsOnceItsPredecessorStayedSilentForANodeTimeout() throws Exception {
        long sentAt = System.currentTimeMillis();
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", caughtUpAfter(sentAt + " incarnation crashed"));
        assertThat(duplicate.checkBeforeJoining(INTERVAL, () -> false)).isTrue();
        assertThat(System.currentTimeMillis() - sentAt).as("listened until the other nodes would count it dead")
                .isGreaterThanOrEqualTo(NODE_TIMEOUT.toMillis());
    }

    @Test
    void aNodeWhosePredecessorLeftStartsAtOnceAndOneSilentLongAgoAfterTwoIntervals() throws Exception {
        DuplicateNodeId left = new DuplicateNodeId("node-a", caughtUpAfter(null));
        assertThat(timed(() -> left.checkBeforeJoining(INTERVAL, () -> false))).isLessThan(INTERVAL);
        DuplicateNodeId crashedLongAgo = new DuplicateNodeId("node-a",
                caughtUpAfter((System.currentTimeMillis() - 60_000) + " incarnation crashed"));
        assertThat(timed(() -> crashedLongAgo.checkBeforeJoining(INTERVAL, () -> false)))
                .isGreaterThanOrEqualTo(INTERVAL.multipliedBy(2).minusMillis(50)).isLessThan(NODE_TIMEOUT.minusMillis(200));
    }

    @Test
    void aNodeStoppedWhileListeningStopsListening() throws Exception {
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", caughtUpAfter(System.currentTimeMillis() + " incarnation crashed"));
        AtomicBoolean stopping = new AtomicBoolean();
        CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS).execute(() -> stopping.set(true));
        assertThat(timed(() -> assertThat(duplicate.checkBeforeJoining(INTERVAL, stopping::get)).isFalse()))
                .isLessThan(NODE_TIMEOUT.minusMillis(300));
    }

    @Test
    void ofTwoProcessesThatPassedTheirCheckAtOnceTheOneWhoseHeartbeatCameSecondGivesWay() throws Exception {
        // What both read from tbmq.cluster.nodes: first's heartbeat, then second's.
        NodeLiveness first = caughtUpAfter(null);
        NodeLiveness second = new NodeLiveness("node-a", "second", NODE_TIMEOUT);
        second.record(bytes("node-a"), null);
        second.caughtUp();
        for (NodeLiveness reader : java.util.List.of(first, second)) {
            reader.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation me"));
            reader.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation second"));
        }
        assertThat(new DuplicateNodeId("node-a", first).checkAfterOwnHeartbeat(() -> { }, INTERVAL, NODE_TIMEOUT, () -> false)).isTrue();
        assertThatThrownBy(() -> new DuplicateNodeId("node-a", second).checkAfterOwnHeartbeat(() -> { }, INTERVAL, NODE_TIMEOUT, () -> false))
                .hasMessageContaining("another broker process (me,").hasMessageContaining("so this one does not start");
    }

    @Test
    void aNodeSendsItsHeartbeatAgainUntilOneComesBackAndSaysSoIfNoneDoes() throws Exception {
        NodeLiveness liveness = caughtUpAfter(null);
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", liveness);
        java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
        // The first two are lost (Kafka did not take them in time); the third comes back.
        Runnable send = () -> {
            if (sent.incrementAndGet() == 3) {
                liveness.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation me"));
            }
        };
        assertThat(duplicate.checkAfterOwnHeartbeat(send, INTERVAL, NODE_TIMEOUT.multipliedBy(5), () -> false)).isTrue();
        assertThat(sent).hasValue(3);
        DuplicateNodeId silent = new DuplicateNodeId("node-a", caughtUpAfter(null));
        assertThatThrownBy(() -> silent.checkAfterOwnHeartbeat(() -> { }, INTERVAL, Duration.ofMillis(300), () -> false))
                .hasMessageContaining("came back");
        assertThat(silent.checkAfterOwnHeartbeat(() -> { }, INTERVAL, NODE_TIMEOUT, () -> true)).as("stopping").isFalse();
    }
}
