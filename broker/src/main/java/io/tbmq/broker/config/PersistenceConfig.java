package io.tbmq.broker.config;

import java.time.Duration;

import io.smallrye.config.WithDefault;

/** Persistent sessions: DEVICE clients in Redis, APPLICATION clients in their own Kafka topics. */
public interface PersistenceConfig {

    /** Messages kept per DEVICE session; the oldest go first. At most 65535 (packet ids are 16 bits). */
    @WithDefault("10000")
    int deviceMessagesLimit();

    /** Lifetime of a stored message without a Message Expiry Interval. */
    @WithDefault("7d")
    Duration deviceMessageTtl();

    /**
     * Partitions tbmq.msg.persisted is created with (keyed by subscriber client id). Nothing writes it but
     * brokers of an earlier build during a rolling upgrade, so one is enough; an existing topic keeps its own.
     */
    @WithDefault("1")
    int persistedPartitions();

    /** Consumer threads moving tbmq.msg.persisted into Redis on this node. */
    @WithDefault("1")
    int persistedConsumers();

    /**
     * While Redis is unreachable, refuse QoS 1/2 PUBLISHes (v5 PUBACK 0x80 with a reason string,
     * v3: connection closed) instead of accepting messages that would wait in Kafka until it returns.
     */
    @WithDefault("true")
    boolean refusePublishesWhileStoreDown();

    /**
     * How long the removal from Redis of a DEVICE client's acknowledged messages is tried again while it
     * fails (a master down or failing over). Past it (or with 100,000 waiting) the removal is given up: those
     * messages stay in Redis and come again, with DUP, when the session next loads
     * (tbmq_redis_acknowledgements_given_up_total). At least 1s; longer than a Redis pod takes to come back.
     */
    @WithDefault("2m")
    Duration acknowledgementRetry();

    /**
     * After a DEVICE session reconnects, look at its Redis queue once more after this long (0:
     * never). In a cluster, a node that has not yet read the client's new session record stores
     * the client's messages without sending them; this finds them without waiting for the next
     * message or reconnect.
     */
    @WithDefault("3s")
    Duration reconnectRecheck();

    /**
     * How long an idle APPLICATION client's consumer waits per fetch (10 fetches a second at 100ms).
     * It returns at once when a message arrives, whatever this is.
     */
    @WithDefault("100ms")
    Duration applicationFetchMaxWait();

    /** Retention of each APPLICATION client's topic (its offline backlog). */
    @WithDefault("7d")
    Duration applicationTopicRetention();
}
