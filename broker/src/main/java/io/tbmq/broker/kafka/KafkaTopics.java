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

    /** The consumer group that routes {@link #msgAll()}: one across the cluster. */
    public String msgAllGroup() {
        return prefix + "tbmq-msg-all-router";
    }
}
