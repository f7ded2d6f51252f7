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

    /** The consumer group that routes {@link #msgAll()}: one across the cluster. */
    public String msgAllGroup() {
        return prefix + "tbmq-msg-all-router";
    }
}
