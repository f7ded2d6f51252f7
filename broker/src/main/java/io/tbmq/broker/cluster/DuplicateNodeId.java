package io.tbmq.broker.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.jboss.logging.Logger;

import io.tbmq.broker.record.NodeHeartbeat;

/**
 * Two broker processes given one node id. Their Kafka consumers share a static group membership,
 * so each one's joining fences the other's: they stop routing in turn, each failing its liveness
 * probe, while both answer for the same sessions. Kafka itself refuses a second broker with a
 * registered id; this does the same from the heartbeats in tbmq.cluster.nodes: a process that starts
 * beside a live one with its id gives way before it changes anything the nodes share, and a running
 * one that hears another says so in its log (and in a metric, {@link NodeLiveness#otherProcessHeartbeats}).
 */
public final class DuplicateNodeId {
    private static final Logger LOG = Logger.getLogger(DuplicateNodeId.class);
    private final String node;
    private final NodeLiveness liveness;
    private final String pod;
    /** The process last logged, until it goes silent: one that comes back is logged again. */
    private final AtomicReference<String> reported = new AtomicReference<>();

    public DuplicateNodeId(String node, NodeLiveness liveness) {
        this(node, liveness, null);
    }

    /** @param pod the UID of the Kubernetes pod this process runs in, or null */
    public DuplicateNodeId(String node, NodeLiveness liveness, String pod) {
        this.node = node;
        this.liveness = liveness;
        this.pod = pod;
    }

    /**
     * Before this node sends a heartbeat, takes its sessions back or joins a consumer group (the
     * heartbeats read to their end): listens as long as {@link NodeLiveness#waitForTwin} says for
     * another process sending this node's id, and refuses to start if one does.
     *
     * @param stopping whether the node is being stopped meanwhile
     * @return false if it was stopped while listening
     * @throws IllegalStateException naming the other process
     */
    public boolean checkBeforeJoining(Duration heartbeatInterval, BooleanSupplier stopping) throws InterruptedException {
        Duration wait = liveness.waitForTwin(heartbeatInterval, System.currentTimeMillis(), pod);
        if (wait.isZero() && liveness.predecessorInPod(pod)) {
            LOG.infof("the last heartbeat with node id %s came from this pod's previous container, which has exited:"
                    + " joining without waiting for it to age", node);
        } else if (!wait.isZero()) {
            LOG.infof("the last heartbeat with node id %s came from another process, which may still run: listening %d ms"
                    + " for another before joining", node, wait.toMillis());
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (liveness.otherProcessWithOwnId().isEmpty() && System.nanoTime() < deadline) {
            if (stopping.getAsBoolean()) {
                return false;
            }
            TimeUnit.MILLISECONDS.sleep(Math.min(100, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
        }
        refuseIf(liveness.otherProcessWithOwnId());
        return true;
    }

    /**
     * After this node sent its first heartbeat, once it is read back: of two processes that passed
     * {@link #checkBeforeJoining} at about the same moment, the one whose heartbeat comes first in
     * tbmq.cluster.nodes (one partition, read in the same order by all) goes on; the other read that
     * one before its own, and gives way here, before it takes its sessions back or joins a group.
     *
     * @param send sends this node's heartbeat: again every {@code interval} until one comes back (one
     *     sent while Kafka does not answer is dropped after the producer's delivery timeout)
     * @return false if the node was stopped meanwhile
     * @throws IllegalStateException naming the other process, or if no heartbeat comes back within {@code timeout}
     */
    public boolean checkAfterOwnHeartbeat(Runnable send, Duration interval, Duration timeout, BooleanSupplier stopping)
            throws InterruptedException {
        long started = System.nanoTime();
        long sent = started - interval.toNanos();
        while (!liveness.ownHeartbeatRead()) {
            if (stopping.getAsBoolean()) {
                return false;
            }
            long now = System.nanoTime();
            if (now - started >= timeout.toNanos()) {
                throw new IllegalStateException("none of this node's heartbeats came back from tbmq.cluster.nodes within "
                        + timeout + ": Kafka does not take or serve them");
            }
            if (now - sent >= interval.toNanos()) {
                send.run();
                sent = now;
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        refuseIf(liveness.otherProcessBeforeOwnHeartbeat());
        return true;
    }

    private void refuseIf(Optional<NodeHeartbeat> other) {
        if (other.isPresent()) {
            throw new IllegalStateException(describe(other.get(), "so this one does not start"));
        }
    }

    /** Whether another process with this node's id was heard within a node timeout. */
    public boolean heard() {
        return liveness.otherProcessWithOwnId().isPresent();
    }

    /** Logs another process heard sending this node's id, once for each time it is heard after a silence. */
    public void report() {
        Optional<NodeHeartbeat> other = liveness.otherProcessWithOwnId();
        if (other.isEmpty()) {
            reported.set(null);
            return;
        }
        String incarnation = String.valueOf(other.get().incarnation());
        if (!incarnation.equals(reported.getAndSet(incarnation))) {
            LOG.error(describe(other.get(), "beside this one"));
        }
    }

    private String describe(NodeHeartbeat other, String consequence) {
        return "another broker process (" + (other.incarnation() == null ? "of an earlier version" : other.incarnation())
                + ", heartbeat sent at " + Instant.ofEpochMilli(other.sentAtMillis()) + " by its clock) runs with node id "
                + node + ", " + consequence + ". Two brokers with one id take each other's Kafka consumers away in turn: give"
                + " each its own tbmq.node-id (TBMQ_NODE_ID)";
    }
}
