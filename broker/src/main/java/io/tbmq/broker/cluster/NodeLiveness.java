package io.tbmq.broker.cluster;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import io.tbmq.broker.log.TailHandler;
import io.tbmq.broker.record.NodeHeartbeat;


/**
 * Which broker nodes are alive, from the heartbeat records in tbmq.cluster.nodes (key = node id,
 * an empty value = the node left after draining). Judged by when this node read a heartbeat, not
 * by the writer's clock, so clock skew between pods does not matter. A node never heard of is
 * given one timeout from this node's start before it counts as dead. (The writer's clock is used
 * only to tell a stale move in a heartbeat read at start.) A heartbeat also says whether
 * its node is moving topics to partitions tbmq.msg.all gained ({@link NodeHeartbeat}).
 *
 * <p>A heartbeat also names the process that sent it: one of this node's id sent by another process
 * is a second broker given the same id ({@link #otherProcessWithOwnId}), which would fence this one's
 * Kafka consumers (they share its static group membership) and answer for its sessions.
 *
 * <p>A node sends heartbeats marked starting from the moment it claims its id until it has read its
 * sessions: it counts as alive (its sessions are not adopted, and another process with its id hears
 * it), but it is not the caretaker, which it could not be before it knows the sessions.
 *
 * <p>A heartbeat names the sending node's cluster where clusters are named: one naming another cluster
 * than this node's means two clusters were given the same Kafka topics ({@link #foreignNode}). Such a
 * node still counts as alive, as it did before clusters were named: taking it for dead would publish
 * the Wills of its clients and adopt its sessions.
 */
public final class NodeLiveness implements TailHandler {
    private final String self;
    private final String incarnation;
    private final long timeoutNanos;
    private final long timeoutMillis;
    private final long startedAt = System.nanoTime();
    private final ConcurrentHashMap<String, Long> lastHeard = new ConcurrentHashMap<>();
    private final Set<String> left = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, Long> leftAt = new ConcurrentHashMap<>();
    /** Nodes whose latest heartbeat says they are still starting. */
    private final Set<String> starting = ConcurrentHashMap.newKeySet();
    private final long handoverNanos;
    /** Whether a heartbeat of this process saying it was starting has been read back. */
    private volatile boolean seenStarting;
    /** When this process's first heartbeat saying it had started was read back, or 0. */
    private volatile long startedReadAt;
    /** The move each node's latest heartbeat reports; nodes not moving are absent. */
    private final ConcurrentHashMap<String, NodeHeartbeat> moving = new ConcurrentHashMap<>();
    private volatile boolean caughtUp;
    /** The latest heartbeat of this node's id from another process read while catching up: a predecessor, or a twin. */
    private volatile NodeHeartbeat predecessor;
    /** The latest such heartbeat from each pod ("" for none): a process of another pod may have written just before. */
    private final ConcurrentHashMap<String, NodeHeartbeat> predecessorByPod = new ConcurrentHashMap<>();
    /** The latest heartbeat of this node's id from another process read live, and when: a twin. */
    private volatile NodeHeartbeat twin;
    private volatile long twinHeardAt;
    private volatile boolean ownHeartbeatRead;
    private volatile NodeHeartbeat beforeOwnHeartbeat;
    private final java.util.concurrent.atomic.AtomicLong twinHeartbeats = new java.util.concurrent.atomic.AtomicLong();
    /** This node's cluster (tbmq.cluster.name), or null where clusters are not named. */
    private final String cluster;
    /** The latest heartbeat of each node of another cluster, and when it was read ({@link System#nanoTime()}), or 0 while catching up. */
    private final ConcurrentHashMap<String, Heard> foreign = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong foreignHeartbeats = new java.util.concurrent.atomic.AtomicLong();

    /** A node of another cluster, its latest heartbeat, and when this node read it (0: while catching up). */
    public record Heard(String node, NodeHeartbeat heartbeat, long readAtNanos) {
    }

    public NodeLiveness(String self, Duration timeout) {
        this(self, null, timeout);
    }

    /**
     * @param incarnation the id this process puts in its heartbeats ({@link NodeHeartbeat#from}); null
     *     where nothing else uses this node's id
     */
    public NodeLiveness(String self, String incarnation, Duration timeout) {
        this(self, incarnation, timeout, Duration.ZERO);
    }

    /**
     * @param handover how long after its heartbeat saying it started came back this node, if it has the
     *     lowest id, takes over as caretaker: the previous one stopped when it read that heartbeat, and
     *     what it adopted just before reaches this node meanwhile (one heartbeat interval)
     */
    public NodeLiveness(String self, String incarnation, Duration timeout, Duration handover) {
        this(self, incarnation, timeout, handover, null);
    }

    /** @param cluster the name of this node's cluster (tbmq.cluster.name), or null where clusters are not named */
    public NodeLiveness(String self, String incarnation, Duration timeout, Duration handover, String cluster) {
        this.self = self;
        this.cluster = cluster;
        this.incarnation = incarnation;
        this.timeoutNanos = timeout.toNanos();
        this.timeoutMillis = timeout.toMillis();
        this.handoverNanos = handover.toNanos();
    }

    @Override
    public void record(byte[] key, byte[] value) {
        String node = new String(key, StandardCharsets.UTF_8);
        if (value == null) {
            if (node.equals(self) && !caughtUp) {
                predecessor = null; // it left: nobody else is using this id
                predecessorByPod.clear();
            }
            left.add(node);
            leftAt.put(node, System.nanoTime());
            lastHeard.remove(node);
            moving.remove(node);
            starting.remove(node);
            foreign.remove(node);
        } else {
            NodeHeartbeat heartbeat = NodeHeartbeat.decode(value);
            // Kept until it ages (foreignNode) or its node leaves: two clusters of one name in different namespaces
            // send the same node ids, and one's heartbeats must not hide the other's.
            if (cluster != null && heartbeat.cluster() != null && !cluster.equals(heartbeat.cluster())) {
                foreign.put(node, new Heard(node, heartbeat, caughtUp ? System.nanoTime() : 0));
                if (caughtUp) {
                    foreignHeartbeats.incrementAndGet();
                }
            }
            if (node.equals(self) && incarnation != null && incarnation.equals(heartbeat.incarnation())) {
                if (!ownHeartbeatRead) {
                    // The log's order decides between two processes: what came before this node's first heartbeat.
                    beforeOwnHeartbeat = otherProcessWithOwnId().orElse(null);
                    ownHeartbeatRead = true;
                }
            } else if (node.equals(self) && incarnation != null) {
                if (caughtUp) {
                    twinHeardAt = System.nanoTime();
                    twin = heartbeat;
                    twinHeartbeats.incrementAndGet();
                } else {
                    predecessor = heartbeat;
                    predecessorByPod.put(heartbeat.pod() == null ? "" : heartbeat.pod(), heartbeat);
                }
                return; // what this node's view of itself rests on comes from its own heartbeats only
            }
            // A node that died moving left its last heartbeat in the topic, and a node starting reads it again: a move
            // read while catching up is believed only if the writer's clock says it is recent. One read live was just sent.
            boolean recent = caughtUp || Math.abs(System.currentTimeMillis() - heartbeat.sentAtMillis()) < timeoutMillis;
            if (heartbeat.moving() && recent) {
                moving.put(node, heartbeat);
            } else {
                moving.remove(node);
            }
            if (heartbeat.starting()) {
                starting.add(node);
            } else {
                starting.remove(node);
            }
            if (node.equals(self)) {
                if (heartbeat.starting()) {
                    seenStarting = true;
                } else if (startedReadAt == 0) {
                    startedReadAt = System.nanoTime();
                }
            }
            left.remove(node);
            leftAt.remove(node);
            lastHeard.put(node, System.nanoTime());
        }
    }

    @Override
    public void caughtUp() {
        caughtUp = true;
    }

    public boolean caughtUpOnce() {
        return caughtUp;
    }

    public boolean alive(String node) {
        if (node.equals(self)) {
            return true;
        }
        if (left.contains(node)) {
            return false;
        }
        Long heard = lastHeard.get(node);
        long since = heard != null ? heard : startedAt;
        return System.nanoTime() - since < timeoutNanos;
    }

    /** Whether tbmq.cluster.nodes holds anything of {@code node}: a heartbeat (old or new) or its leaving. */
    public boolean known(String node) {
        return node.equals(self) || lastHeard.containsKey(node) || left.contains(node);
    }

    /**
     * How long {@code node} has been gone (since it left, or since its last heartbeat; a node never
     * heard of, since this node started), or 0 while it is alive.
     */
    public long goneForNanos(String node) {
        if (alive(node)) {
            return 0;
        }
        long now = System.nanoTime();
        Long since = left.contains(node) ? leftAt.get(node) : lastHeard.get(node);
        return now - (since != null ? since : startedAt);
    }

    /**
     * The moves other live nodes report, by node, from their latest heartbeat: read live, or while
     * catching up if sent within a node timeout by this node's clock. A node announces the end of
     * its move at once, so one shows here after it ended only while that announcement is on its
     * way, or for a node that died moving, until it counts as dead.
     */
    public Map<String, NodeHeartbeat> movesUnderWay() {
        Map<String, NodeHeartbeat> out = new java.util.TreeMap<>();
        moving.forEach((node, heartbeat) -> {
            if (!node.equals(self) && alive(node)) {
                out.put(node, heartbeat);
            }
        });
        return out;
    }

    /** Live nodes that have sent a heartbeat, and this one. */
    public Set<String> aliveNodes() {
        Set<String> out = new TreeSet<>();
        out.add(self);
        for (String node : lastHeard.keySet()) {
            if (alive(node)) {
                out.add(node);
            }
        }
        return out;
    }

    /**
     * Whether this node's own heartbeats come back to it in time. If not, this node is the slow
     * one (starved of CPU, cut off from Kafka) and its view of the others is stale: it must not
     * declare anybody dead.
     */
    public boolean viewIsCurrent() {
        Long own = lastHeard.get(self);
        return own != null && System.nanoTime() - own < timeoutNanos / 2;
    }

    /**
     * The node that acts for dead ones: the live node with the lowest id among those not starting. Every
     * node computes the same, this one too from its own heartbeats as read back: it takes over only
     * once the others can have read that it has started, and a handover later, so that two never act at once.
     */
    public boolean isCaretaker() {
        for (String node : aliveNodes()) {
            if (!starting.contains(node)) {
                return node.equals(self) && handedOver();
            }
        }
        return false;
    }

    private boolean handedOver() {
        if (!seenStarting) {
            return true;
        }
        long since = startedReadAt;
        return since != 0 && System.nanoTime() - since >= handoverNanos;
    }

    /** Whether {@code node}'s latest heartbeat says it is still starting. */
    public boolean starting(String node) {
        return starting.contains(node);
    }

    /**
     * How long to listen, once caught up, for another process sending heartbeats with this node's id
     * before this one changes anything the nodes share: zero when nothing of this id was read or its
     * last record is its leaving (a process that stopped on purpose). After a heartbeat from another
     * process (one killed, or alive), until the other nodes would count that process dead: one node
     * timeout after it was sent by the writer's clock, but never less than two heartbeat intervals
     * (a live process sends another within that, whatever the clocks say) nor more than one node timeout.
     */
    public Duration waitForTwin(Duration interval, long nowMillis) {
        return waitForTwin(interval, nowMillis, null);
    }

    /**
     * As {@link #waitForTwin(Duration, long)}, for a process running in the Kubernetes pod {@code pod}
     * (null outside one): zero also when the last heartbeat came from this same pod, whose previous
     * container has exited before this one started.
     */
    public Duration waitForTwin(Duration interval, long nowMillis, String pod) {
        NodeHeartbeat last = predecessor;
        if (last != null && predecessorInPod(pod)) {
            // Another pod's process may have sent this id just before and be silent for a moment: listen for it
            // if its latest heartbeat is recent by its writer's clock.
            last = predecessorByPod.entrySet().stream().filter(e -> !e.getKey().equals(pod)).map(Map.Entry::getValue)
                    .filter(h -> Math.abs(nowMillis - h.sentAtMillis()) < timeoutMillis)
                    .max(java.util.Comparator.comparingLong(NodeHeartbeat::sentAtMillis)).orElse(null);
        }
        if (last == null) {
            return Duration.ZERO;
        }
        long floor = Math.min(2 * interval.toMillis(), timeoutMillis);
        long untilDead = timeoutMillis - (nowMillis - last.sentAtMillis());
        return Duration.ofMillis(Math.max(floor, Math.min(timeoutMillis, untilDead)));
    }

    /** Whether the last heartbeat of this node's id read while catching up came from an earlier process in the pod {@code pod}. */
    public boolean predecessorInPod(String pod) {
        NodeHeartbeat last = predecessor;
        return pod != null && last != null && pod.equals(last.pod());
    }

    /**
     * The latest heartbeat another process sent with this node's id, if it was read after catching up
     * and within one node timeout: two brokers run with one id. Empty while none is.
     */
    public java.util.Optional<NodeHeartbeat> otherProcessWithOwnId() {
        NodeHeartbeat heard = twin;
        if (heard == null || System.nanoTime() - twinHeardAt >= timeoutNanos) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(heard);
    }

    /**
     * The node of another cluster heard most recently, if within one node timeout: read live, or read
     * while catching up and sent within one by its writer's clock. Empty while none is.
     */
    public java.util.Optional<Heard> foreignNode(long nowMillis) {
        long now = System.nanoTime();
        return foreign.values().stream()
                .filter(h -> h.readAtNanos() != 0 ? now - h.readAtNanos() < timeoutNanos
                        : Math.abs(nowMillis - h.heartbeat().sentAtMillis()) < timeoutMillis)
                .max(java.util.Comparator.comparingLong((Heard h) -> h.heartbeat().sentAtMillis()));
    }

    /** Heartbeats read from nodes of another cluster since this one caught up. */
    public long foreignHeartbeats() {
        return foreignHeartbeats.get();
    }

    /** Heartbeats with this node's id read from other processes since this one caught up. */
    public long otherProcessHeartbeats() {
        return twinHeartbeats.get();
    }

    /** Whether a heartbeat this process sent has been read back. */
    public boolean ownHeartbeatRead() {
        return ownHeartbeatRead;
    }

    /**
     * Another process's heartbeat with this node's id read after catching up and before this process's
     * first one came back (within a node timeout of it), or empty: none, or this one's not back yet.
     */
    public java.util.Optional<NodeHeartbeat> otherProcessBeforeOwnHeartbeat() {
        return java.util.Optional.ofNullable(ownHeartbeatRead ? beforeOwnHeartbeat : null);
    }
}
