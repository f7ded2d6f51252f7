package io.tbmq.operator.desired;

import java.util.Map;

import io.tbmq.operator.api.TbmqCluster;

/**
 * Partitions of the two message topics. {@code messages} is tbmq.msg.all's: the plan's, never lowered.
 * tbmq.msg.persisted is only drained now (the routing consumers store DEVICE copies in Redis
 * themselves; brokers of an earlier build wrote it, until a rolling upgrade replaced them), so it keeps
 * the partitions it has and a new cluster's gets one: growing it with the plan would only add idle
 * partition replicas to Kafka. A {@code tbmq.persistence.persisted-partitions} in spec.broker.config
 * (for brokers of an earlier build kept on purpose) raises it, and the KafkaTopic follows.
 */
public record TopicPartitions(int messages, int persisted) {
    static final String PERSISTED_KEY = "tbmq.persistence.persisted-partitions";

    public TopicPartitions {
        if (messages < 1 || persisted < 1) {
            throw new IllegalArgumentException("partitions must be at least 1: " + messages + ", " + persisted);
        }
    }

    /** {@code persistedNow}: what tbmq.msg.persisted's KafkaTopic has (0 when there is none, e.g. an external Kafka). */
    public static TopicPartitions of(TbmqCluster owner, int messages, int persistedNow) {
        return new TopicPartitions(messages, Math.max(Math.max(1, persistedNow), requested(owner)));
    }

    private static int requested(TbmqCluster owner) {
        Map<String, String> config = owner.getSpec().getBroker().getConfig();
        String value = config == null ? null : config.get(PERSISTED_KEY);
        try {
            return value == null ? 1 : Math.max(1, Integer.parseInt(value.trim()));
        } catch (NumberFormatException e) {
            return 1; // not a number: the brokers log that they could not apply it and keep their value
        }
    }
}
