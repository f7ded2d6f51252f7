package io.tbmq.broker.kafka;

/** The broker's Kafka topic and consumer-group names, all under one optional prefix. */
public final class KafkaTopics {
    private final String prefix;

    public KafkaTopics(String prefix) {
        this.prefix = prefix;
    }

    /** Every inbound PUBLISH, keyed by MQTT topic. */
    public String msgAll() {
        return prefix + "tbmq.msg.all";
    }

    /** Copies for persistent DEVICE sessions, keyed by subscriber client id, on their way to Redis. */
    public String msgPersisted() {
        return prefix + "tbmq.msg.persisted";
    }

    public String msgPersistedGroup() {
        return prefix + "tbmq-msg-persisted";
    }

    /** Persistent sessions: client id -> session state (compacted). */
    public String clientSessions() {
        return prefix + "tbmq.client.session";
    }

    /** Retained messages: MQTT topic -> message (compacted; an empty value clears the topic). */
    public String retained() {
        return prefix + "tbmq.retained.msg";
    }

    /** Node heartbeats: node id -> last beat, and a tbmq.msg.all move under way ({@code NodeHeartbeat}; compacted; an empty value = the node left). */
    public String clusterNodes() {
        return prefix + "tbmq.cluster.nodes";
    }

    /** Copies for clients of {@code node} that are not stored on the way (in-memory sessions, QoS 0). */
    public String downlinkBasic(String node) {
        return prefix + "tbmq.msg.downlink.basic." + node;
    }

    /** DEVICE messages for clients connected to {@code node}, after Redis assigned their packet ids. */
    public String downlinkPersisted(String node) {
        return prefix + "tbmq.msg.downlink.persisted." + node;
    }

    public String downlinkGroup(String node) {
        return prefix + "tbmq-downlink-" + node;
    }

    /** The consumer group that routes {@link #msgAll()}: one across the cluster. */
    public String msgAllGroup() {
        return prefix + "tbmq-msg-all-router";
    }
}
