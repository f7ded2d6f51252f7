package io.tbmq.broker.record;

/**
 * Where a session's messages live while it is away: only in memory (a session with expiry 0, or
 * QoS 0 messages), in Redis (persistent DEVICE sessions) or in the client's own Kafka topic
 * (persistent APPLICATION sessions).
 */
public enum Persistence {
    MEMORY,
    DEVICE,
    APPLICATION
}
