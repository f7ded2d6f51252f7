package io.tbmq.broker.log;

/** Receives every record of a compacted topic in order per partition, on the tail's own thread. */
public interface TailHandler {
    /** {@code value} is null for a tombstone. */
    void record(byte[] key, byte[] value);

    /** Everything that was in the topic at start has been handed over. */
    void caughtUp();
}
