package io.tbmq.broker.config;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import io.smallrye.config.WithDefault;

/** The Kafka cluster every PUBLISH is routed through, and the broker's topics in it. */
public interface KafkaConfig {

    @WithDefault("localhost:9092")
    String bootstrapServers();

    /** Prefix of every topic and group name, for several clusters sharing one Kafka (none by default). */
    Optional<String> topicPrefix();

    /** Create missing topics at start (off when an operator provisions them as KafkaTopic resources). */
    @WithDefault("true")
    boolean createTopics();

    /** Replication factor of topics the broker creates. */
    @WithDefault("1")
    short replicationFactor();

    /** Partitions of tbmq.msg.all (the TBMQ paper's Table 5 scales this with the throughput). */
    @WithDefault("12")
    int msgAllPartitions();

    /** Consumer threads reading tbmq.msg.all on this node. */
    @WithDefault("2")
    int msgAllConsumers();

    /**
     * Records of tbmq.msg.all a routing consumer reads past its oldest batch not yet stored: while
     * one Redis master is unreachable, the messages for everyone else go on up to this many. 0 reads
     * one batch at a time.
     */
    @WithDefault("50000")
    int msgAllReadAhead();

    /**
     * Producer linger: trades a little publish latency for fewer, larger produce requests. Kafka's
     * CPU follows its request count more than its message count; since DEVICE copies no longer
     * cross Kafka a second time, 2 ms cost no more CPU than 5 ms at 20,000 msg/s and took about
     * 2.5 ms off the median (docs/benchmarks.md).
     */
    @WithDefault("2ms")
    Duration producerLinger();

    @WithDefault("65536")
    int producerBatchSize();

    /**
     * none, lz4, zstd, snappy or gzip. MQTT payloads are small and batches short, so compression
     * saves little and costs CPU twice (the broker compresses, Kafka decompresses to validate).
     */
    @WithDefault("none")
    String producerCompression();

    /**
     * Bytes a fetch of the broker's own consumers (tbmq.msg.all, tbmq.msg.persisted, the downlink
     * topics) waits for, up to consumer-fetch-max-wait. 64 KiB is more than a busy partition set
     * gathers in a few milliseconds on one node, so at moderate rates every fetch waits the full
     * max-wait (at most 100 fetches a second per consumer instead of one per produce), and at high
     * rates fetches return full without waiting. APPLICATION clients' consumers do not use it.
     */
    @WithDefault("65536")
    int consumerFetchMinBytes();

    /** Longest a fetch of the broker's own consumers waits for consumer-fetch-min-bytes. */
    @WithDefault("10ms")
    Duration consumerFetchMaxWait();

    /**
     * How often the broker's producer and consumers refresh topic metadata: partitions the
     * operator adds to a topic are produced to and consumed within this long, without a restart
     * (Kafka's own default is 5 minutes). tbmq.msg.all's count is asked of Kafka every second instead.
     */
    @WithDefault("30s")
    Duration metadataMaxAge();

    /**
     * The same for the broker's consumers, shorter: partitions added by a scale edit are assigned to
     * a consumer within seconds, about when the broker starts sending tbmq.msg.all's moving topics
     * to them (it asks Kafka for that topic's count every second and moves 2 s later).
     */
    @WithDefault("3s")
    Duration consumerMetadataMaxAge();

    /** acks for produced messages; "all" so a PUBACK means the message is on every in-sync replica. */
    @WithDefault("all")
    String producerAcks();

    /** How long a produce may take before the publisher is told it failed. */
    @WithDefault("10s")
    Duration deliveryTimeout();

    @WithDefault("500")
    int consumerMaxPollRecords();

    /**
     * How often a consumer commits what it has processed (always only what is durable). A crash
     * replays at most this much, which the stores recognise; fewer commits cost Kafka less CPU.
     */
    @WithDefault("200ms")
    Duration consumerCommitInterval();

    /**
     * How long a consumer waits for a polled batch before reading it again, with every batch polled
     * after it; what was delivered already goes out again with DUP. A batch of tbmq.msg.all whose
     * only unfinished copies wait for Redis (a full master, or one that is down) is not read again:
     * its writes keep trying, and the consumer reads on up to tbmq.kafka.msg-all-read-ahead.
     */
    @WithDefault("30s")
    Duration consumerBatchTimeout();

    /**
     * When tbmq.msg.all gains partitions, how long at most a topic that moves to another partition
     * waits for its messages in the old one to be routed, so that subscribers get the topic's
     * messages in order (MQTT 4.6). Past it the waiting messages go on, logged. Topics that keep
     * their partition never wait; the wait is usually 2 s (for every node to move) plus the
     * routing group's commit interval.
     */
    @WithDefault("10s")
    Duration partitionMoveWait();

    /**
     * A consumer (a node) silent this long leaves its group and its partitions move to other
     * nodes: the delivery pause after a node dies (6 s, Kafka's smallest by default, measured
     * 6.8 s against 12 s). A node that stops on purpose leaves at once.
     */
    @WithDefault("10s")
    Duration consumerSessionTimeout();

    /**
     * How often a consumer tells its group it is alive, and so how soon it notices a rebalance: when
     * a node joins (a scale-up) every member must rejoin before any of them reads on, twice with
     * cooperative assignment (revoke, then assign), so this bounds the pause twice over. At most a
     * third of the session timeout.
     */
    @WithDefault("500ms")
    Duration consumerHeartbeatInterval();

    /** Extra client properties for every Kafka client (security.protocol, sasl.*, ssl.*). */
    Map<String, String> properties();

    /**
     * A Java properties file of further Kafka client properties (a mounted Secret in Kubernetes, so
     * SASL and SSL settings stay out of environment variables); {@link #properties()} wins on a clash.
     */
    Optional<String> propertiesFile();
}
