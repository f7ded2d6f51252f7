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
     * A node without a heartbeat for this long is dead: the surviving node with the lowest id
     * publishes the Wills of its connected clients and adopts its persistent sessions.
     */
    @WithDefault("10s")
    Duration nodeTimeout();

    /** Partitions of each node's downlink topics (tbmq.msg.downlink.basic|persisted.<node>). */
    @WithDefault("4")
    int downlinkPartitions();

    /** Consumer threads for this node's downlink topics. */
    @WithDefault("1")
    int downlinkConsumers();
}
