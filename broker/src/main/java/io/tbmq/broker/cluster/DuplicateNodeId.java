package io.tbmq.broker.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.tbmq.broker.record.NodeHeartbeat;

/**
 * Two broker processes given one node id. Their Kafka consumers share a static group membership,
 * so each one's joining fences the other's: they stop routing in turn, each failing its liveness
 * probe, while both answer for the same sessions. Kafka itself refuses a second broker with a
 * registered id; this does the same from the heartbeats in tbmq.cluster.nodes: a process that starts
 * beside a live one with its id gives way before it joins any consumer group, and a running one
 * that hears another says so (log and metric) for as long as it does.
 */
public final class DuplicateNodeId {
    private static final Logger LOG = Logger.getLogger(DuplicateNodeId.class);
    private final String node;
    private final NodeLiveness liveness;
    private volatile String reported;

    public DuplicateNodeId(String node, NodeLiveness liveness) {
        this.node = node;
        this.liveness = liveness;
    }

    /**
     * Before this node sends a heartbeat or joins a consumer group (its heartbeats caught up): listens as long as
     * {@link NodeLiveness#waitForTwin} says for another process sending this node's id, and refuses to start if one does.
     *
     * @throws IllegalStateException naming the other process
     */
    public void checkBeforeJoining(Duration heartbeatInterval) throws InterruptedException {
        Duration wait = liveness.waitForTwin(heartbeatInterval, System.currentTimeMillis());
        if (!wait.isZero()) {
            LOG.infof("the last heartbeat with node id %s came from another process, which may still run: listening %d ms"
                    + " for another before joining", node, wait.toMillis());
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (liveness.otherProcessWithOwnId().isEmpty() && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(Math.min(100, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
        }
        Optional<NodeHeartbeat> other = liveness.otherProcessWithOwnId();
        if (other.isPresent()) {
            throw new IllegalStateException(describe(other.get(), "so this one does not start"));
        }
    }

    /** 1 while another process sends heartbeats with this node's id; logs each such process once. */
    public int heard() {
        Optional<NodeHeartbeat> other = liveness.otherProcessWithOwnId();
        if (other.isEmpty()) {
            return 0;
        }
        String incarnation = String.valueOf(other.get().incarnation());
        if (!incarnation.equals(reported)) {
            reported = incarnation;
            LOG.error(describe(other.get(), "beside this one"));
        }
        return 1;
    }

    private String describe(NodeHeartbeat other, String consequence) {
        return "another broker process (" + (other.incarnation() == null ? "of an earlier version" : other.incarnation())
                + ", heartbeat sent at " + Instant.ofEpochMilli(other.sentAtMillis()) + " by its clock) runs with node id "
                + node + ", " + consequence + ". Two brokers with one id take each other's Kafka consumers away in turn: give each its own"
                + " tbmq.node-id (TBMQ_NODE_ID)";
    }
}
