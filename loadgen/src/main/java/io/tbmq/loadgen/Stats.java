package io.tbmq.loadgen;

import java.util.BitSet;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * What one run observed. Latencies in microseconds. Loss, duplicates and order are exact: each
 * publisher records the sequence numbers the broker acknowledged (or, at QoS 0, that were sent)
 * during the measurement window, each subscriber stream the ones it received; a stream's bits are
 * only touched by the event loop of its connection, so no locks.
 */
final class Stats {
    final Histogram endToEnd = new ConcurrentHistogram(3);
    final Histogram publishAck = new ConcurrentHistogram(3);
    final LongAdder sentInWindow = new LongAdder();
    final LongAdder ackedInWindow = new LongAdder();
    final LongAdder ackErrors = new LongAdder();
    final LongAdder receivedInWindow = new LongAdder();
    final LongAdder duplicates = new LongAdder();
    final LongAdder duplicatesWithoutDup = new LongAdder();
    final LongAdder reordered = new LongAdder();
    final LongAdder skippedBackpressure = new LongAdder();

    final BitSet[] acknowledged;
    final BitSet[] received;
    final long[] highest;
    final long[] lastArrival;
    final long[] maxGap;
    volatile long windowStart = Long.MAX_VALUE;
    volatile long windowEnd = Long.MAX_VALUE;

    Stats(int publishers, int streams) {
        acknowledged = new BitSet[publishers];
        for (int i = 0; i < publishers; i++) {
            acknowledged[i] = new BitSet();
        }
        received = new BitSet[streams];
        highest = new long[streams];
        lastArrival = new long[streams];
        maxGap = new long[streams];
        for (int i = 0; i < streams; i++) {
            received[i] = new BitSet();
            highest[i] = -1;
        }
    }

    boolean inWindow(long sentNanos) {
        return sentNanos >= windowStart && sentNanos < windowEnd;
    }

    /** The broker took the message (PUBACK/PUBCOMP, or written at QoS 0). Publisher's event loop. */
    void accepted(int publisher, long sequence, long sentNanos, long now, boolean measureAck) {
        if (!inWindow(sentNanos)) {
            return;
        }
        acknowledged[publisher].set((int) sequence);
        ackedInWindow.increment();
        if (measureAck) {
            publishAck.recordValue(Math.max(0, (now - sentNanos) / 1000));
        }
    }

    /** A message arrived on subscriber stream {@code stream}. That subscriber's event loop only. */
    void arrived(int stream, long sequence, long sentNanos, boolean dup, long now) {
        int seq = (int) sequence;
        if (received[stream].get(seq)) {
            duplicates.increment();
            if (!dup) {
                duplicatesWithoutDup.increment();
            }
            return;
        }
        received[stream].set(seq);
        if (sequence < highest[stream]) {
            reordered.increment();
        } else {
            highest[stream] = sequence;
        }
        if (inWindow(sentNanos)) {
            receivedInWindow.increment();
            endToEnd.recordValue(Math.max(0, (now - sentNanos) / 1000));
            if (lastArrival[stream] != 0) {
                maxGap[stream] = Math.max(maxGap[stream], now - lastArrival[stream]);
            }
            lastArrival[stream] = now;
        }
    }

    /** Acknowledged in the window but never received by stream {@code stream} of {@code publisher}. */
    long lost(int stream, int publisher) {
        BitSet missing = (BitSet) acknowledged[publisher].clone();
        missing.andNot(received[stream]);
        return missing.cardinality();
    }
}
