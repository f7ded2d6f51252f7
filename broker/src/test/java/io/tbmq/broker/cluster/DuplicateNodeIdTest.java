package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** A second broker process with a node's id: refused at its start, reported while it runs. */
class DuplicateNodeIdTest {
    private static final Duration INTERVAL = Duration.ofMillis(200);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static NodeLiveness caughtUpAfter(String lastOfOwnId) {
        NodeLiveness liveness = new NodeLiveness("node-a", "me", Duration.ofSeconds(5));
        liveness.record(bytes("node-a"), lastOfOwnId == null ? null : bytes(lastOfOwnId));
        liveness.caughtUp();
        return liveness;
    }

    @Test
    void aNodeWhoseIdAnotherLiveProcessSendsDoesNotStart() throws Exception {
        NodeLiveness liveness = caughtUpAfter(System.currentTimeMillis() + " incarnation other");
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", liveness);
        // The other process's next heartbeat, one interval later.
        CompletableFuture.delayedExecutor(INTERVAL.toMillis(), TimeUnit.MILLISECONDS).execute(
                () -> liveness.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation other")));
        assertThatThrownBy(() -> duplicate.checkBeforeJoining(INTERVAL)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("another broker process (other,")
                .hasMessageContaining("runs with node id node-a, so this one does not start")
                .hasMessageContaining("tbmq.node-id");
        assertThat(duplicate.heard()).isEqualTo(1);
    }

    @Test
    void aNodeRestartedAfterACrashStartsOnceItsPredecessorsHeartbeatsStayedAway() throws Exception {
        NodeLiveness liveness = caughtUpAfter(System.currentTimeMillis() + " incarnation crashed");
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", liveness);
        long started = System.nanoTime();
        duplicate.checkBeforeJoining(INTERVAL);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("listened for three intervals")
                .isGreaterThanOrEqualTo(Duration.ofMillis(3 * INTERVAL.toMillis() - 50));
        assertThat(duplicate.heard()).isZero();
    }

    @Test
    void aNodeWhosePredecessorLeftOrWentSilentLongAgoStartsAtOnce() throws Exception {
        for (String last : new String[] { null, (System.currentTimeMillis() - 60_000) + " incarnation crashed" }) {
            DuplicateNodeId duplicate = new DuplicateNodeId("node-a", caughtUpAfter(last));
            long started = System.nanoTime();
            duplicate.checkBeforeJoining(INTERVAL);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("after '%s'", last).isLessThan(INTERVAL);
        }
    }

    @Test
    void aRunningNodeReportsAnotherProcessWithItsIdForAsLongAsItHearsIt() throws Exception {
        NodeLiveness liveness = new NodeLiveness("node-a", "me", Duration.ofMillis(500));
        liveness.caughtUp();
        DuplicateNodeId duplicate = new DuplicateNodeId("node-a", liveness);
        liveness.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation me"));
        assertThat(duplicate.heard()).isZero();
        liveness.record(bytes("node-a"), bytes(System.currentTimeMillis() + " incarnation twin"));
        assertThat(duplicate.heard()).isEqualTo(1);
        Thread.sleep(700);
        assertThat(duplicate.heard()).as("not heard for a node timeout").isZero();
    }
}
