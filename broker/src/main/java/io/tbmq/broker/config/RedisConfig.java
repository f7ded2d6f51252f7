package io.tbmq.broker.config;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.WithDefault;

/** Redis (standalone or Cluster) holding the persistent sessions of DEVICE clients. */
public interface RedisConfig {

    /** standalone or cluster. */
    @WithDefault("standalone")
    String mode();

    /** host:port[,host:port...]; for a cluster, any of its nodes (the rest is discovered). */
    @WithDefault("localhost:6379")
    String nodes();

    Optional<String> password();

    /**
     * Commands buffered on the shared connection before they are flushed: the TBMQ paper's "Lettuce
     * batch size" (Table 5: 150 at 200k msg/s up to 500 at 1M); the operator sets it.
     */
    @WithDefault("5")
    int lettuceBatchSize();

    /**
     * A partial batch is flushed this long after its first command, so a quiet node still answers
     * promptly. Writes that are a batch already (a poll's messages, a reconnect's load) go at once.
     */
    @WithDefault("2ms")
    Duration flushInterval();

    @WithDefault("5s")
    Duration commandTimeout();

    /**
     * How long the TCP connect to a Redis node may take (at least 1ms; the command timeout still
     * bounds the whole connection set-up, so a value at or above it has no effect). A pod that is
     * gone leaves its IP silent rather than refusing, and a topology refresh waits for every node it
     * knew before it asks the configured {@link #nodes()} (only if none answered): bounded by the 5 s command timeout alone,
     * after every Redis pod restarted on new IPs the brokers went on sending to the old ones for 9 s
     * after the cluster was whole. Connections inside a cluster open in milliseconds.
     */
    @WithDefault("2s")
    Duration connectTimeout();

    /**
     * Cluster mode: how often the broker reads the cluster's topology even when nothing signals a
     * change. After the operator removes a drained master, slots whose owner the broker learned
     * before the last moves are sent to a node that is gone until the topology is read again.
     */
    @WithDefault("5s")
    Duration topologyRefreshInterval();

    /**
     * 0: each client's keys carry its own hash tag (the TBMQ paper's layout). N > 0: clients are hashed
     * into N slot groups sharing a tag, so one Lua call stores the messages of many clients.
     */
    @WithDefault("0")
    int slotGroups();

    /**
     * Cluster mode: the messages (and acknowledgements) of a batch go in one script call per master,
     * for all the clients whose slots it serves, instead of one call per client (or slot group). A
     * client whose slot moved since the broker last read the topology is left out by the script and
     * sent again on its own. Off: one call per client (or slot group).
     */
    @WithDefault("true")
    boolean callsPerMaster();

    /**
     * How often the broker reads each master's memory use (INFO memory), for the
     * tbmq_redis_memory_used_bytes and tbmq_redis_memory_max_bytes gauges and a warning in the log when
     * a master passes 90 % of its maxmemory. 0s: never.
     */
    @WithDefault("15s")
    Duration memoryCheckInterval();
}
