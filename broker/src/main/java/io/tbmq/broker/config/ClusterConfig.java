package io.tbmq.broker.config;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/**
 * How broker nodes cooperate. They never connect to each other: each one announces itself with
 * heartbeats in tbmq.cluster.nodes, and a node silent for {@link #nodeTimeout()} is taken for
 * dead, so its clients' Wills are published and its sessions adopted (docs/architecture.md#cluster).
 */
public interface ClusterConfig {

    /** Interval of this node's heartbeat records. */
    @WithDefault("2s")
    Duration heartbeatInterval();

    /**
     * A node without a heartbeat for this long is dead: the caretaker (the live node with the lowest
     * id among those not starting) publishes the Wills of its connected clients and adopts its
     * persistent sessions.
     */
    @WithDefault("10s")
    Duration nodeTimeout();

    /** Partitions of each node's downlink topics (tbmq.msg.downlink.basic|persisted.<node>). */
    @WithDefault("4")
    int downlinkPartitions();

    /** Consumer threads for this node's downlink topics. */
    @WithDefault("1")
    int downlinkConsumers();

    /**
     * A node gone this long (it left, or stopped sending heartbeats) is not coming back, as after a
     * scale-down: the caretaker deletes its downlink topics and their consumer groups. Its sessions
     * were adopted long before (node-timeout), and a node that does return creates them again.
     */
    @WithDefault("10m")
    Duration downlinkRetention();

    /**
     * The Kubernetes pod this broker runs in (its UID; the operator sets it). Heartbeats carry it, so a
     * broker restarted in the same pod after a crash knows that the process that last sent its node id
     * is dead (a pod's container restarts only after it exited) and starts without waiting for that
     * heartbeat to age. Unset outside Kubernetes.
     */
    java.util.Optional<String> podUid();

    /**
     * The name of the cluster this node belongs to (the operator sets namespace/name of the
     * TbmqCluster). Heartbeats carry it, so a second cluster given the same Kafka topics is told
     * apart: a node that hears a node of another cluster does not start, and a running one logs it.
     * Unset: nothing is checked.
     */
    java.util.Optional<String> name();
}
