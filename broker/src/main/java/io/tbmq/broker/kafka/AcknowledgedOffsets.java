package io.tbmq.broker.kafka;

import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * How far an APPLICATION client's commit may go: past what it acknowledged, never past the lowest
 * offset handed to its session and still unacknowledged. An acknowledgement can come before its
 * record is read again: a resumed session writes what it had in flight before its new consumer gets
 * there. It is kept for that read, or the commit would wait at that offset until the next restart,
 * which then delivers everything from it again. The consumer's thread only.
 */
final class AcknowledgedOffsets {
    /** Offsets handed to the session and not acknowledged yet: the commit cannot pass the lowest. */
    private final TreeSet<Long> outstanding = new TreeSet<>();
    /** Acknowledged before they were read. */
    private final Set<Long> ackedAhead = new HashSet<>();
    private long readUpTo;
    private long commit;

    /** Reading starts at {@code start}, the committed offset. */
    AcknowledgedOffsets(long start) {
        readUpTo = start;
        commit = start;
    }

    /** A record handed to the session; {@code awaitsAck} for QoS 1 and 2. */
    void read(long offset, boolean awaitsAck) {
        if (awaitsAck && !ackedAhead.remove(offset)) {
            outstanding.add(offset);
        }
        // Never back: a consumer reset to the earliest offset reads old offsets again.
        readUpTo = Math.max(readUpTo, offset + 1);
    }

    void acknowledged(long offset) {
        if (!outstanding.remove(offset) && offset >= readUpTo) {
            ackedAhead.add(offset);
        }
    }

    /** The lowest unacknowledged offset, else one past the last read (offsets retention removed are skipped). */
    long commitOffset() {
        commit = outstanding.isEmpty() ? Math.max(commit, readUpTo) : outstanding.first();
        return commit;
    }
}
