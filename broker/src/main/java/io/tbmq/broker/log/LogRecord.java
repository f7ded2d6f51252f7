package io.tbmq.broker.log;

/**
 * One record of a broker topic as its consumer hands it to the broker: where it was in the log
 * and its bytes, decoded by whoever handles it (the formats are in {@code record}).
 *
 * @param value null for a tombstone of a compacted topic
 */
public record LogRecord(String topic, int partition, long offset, byte[] key, byte[] value) {
}
