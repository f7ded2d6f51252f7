package io.tbmq.operator.desired;

/**
 * Partitions of the two message topics. {@code messages} is tbmq.msg.all's: the plan's, never lowered.
 * tbmq.msg.persisted is only drained now (the routing consumers store DEVICE copies in Redis
 * themselves; brokers of an earlier build wrote it, until a rolling upgrade replaced them), so it keeps
 * the partitions it has and a new cluster's gets one: growing it with the plan would only add idle
 * partition replicas to Kafka.
 */
public record TopicPartitions(int messages, int persisted) {

    public TopicPartitions {
        if (messages < 1 || persisted < 1) {
            throw new IllegalArgumentException("partitions must be at least 1: " + messages + ", " + persisted);
        }
    }

    /** {@code persistedNow}: what tbmq.msg.persisted has (0 when it does not exist yet or is not the operator's). */
    public static TopicPartitions of(int messages, int persistedNow) {
        return new TopicPartitions(messages, Math.max(1, persistedNow));
    }
}
