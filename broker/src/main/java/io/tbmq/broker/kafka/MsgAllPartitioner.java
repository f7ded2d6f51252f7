package io.tbmq.broker.kafka;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.apache.kafka.common.utils.Utils;
import org.jboss.logging.Logger;

/**
 * Chooses the {@code tbmq.msg.all} partition of each message, by its MQTT topic as Kafka's own
 * partitioner would, and keeps each topic's messages in order when the topic gains partitions.
 *
 * <p>A scale edit adds partitions, and most topics then map to another partition. Without care a
 * topic's next message could be routed from its new partition before its last ones leave the old
 * one's backlog, and a subscriber would get them out of order, which MQTT does not allow for one
 * topic from one client (§4.6). So when this node sees the count grow, a moving topic's messages
 * wait here until the routing group has committed, in the old partition, everything written there
 * before (the partition's end once this node's records in flight are acknowledged); then they
 * follow to the new partition, in the order they came. Topics that keep their partition never
 * wait. The wait is bounded ({@code maxHold}, {@code maxHeldBytes}): past it, messages go on and
 * order across the move is not kept for the topics still waiting (logged).
 *
 * <p>Nodes move together. Each asks Kafka for the count every second, so every node moves within
 * about a second of the first; and a node reads where the old partitions end only {@code align}
 * after it moved, when the others have stopped writing moving topics there too. So a client that
 * publishes to one node and then reconnects to another has its messages routed in order across
 * the move, unless a node could not ask Kafka for longer than {@code align}. A node that starts
 * during a move first sees the grown count and has nothing to move by itself: it joins the move
 * the other nodes report in their heartbeats ({@link #join}), before it accepts clients.
 *
 * <p>The count comes from Kafka, and the producer learns it only on its next metadata refresh. A
 * send to a partition the producer does not know yet waits for that refresh on the sending
 * thread, so during the move messages for them are held and sent from the thread that follows the
 * count, whose send makes the producer fetch them. A node that had none to send lets the move end
 * a second after its old partitions are routed; its first send to a new partition then fetches the
 * metadata on the client's thread, once.
 */
public final class MsgAllPartitioner {
    private static final Logger LOG = Logger.getLogger(MsgAllPartitioner.class);

    /** The topic's producer and the routing group's progress; a seam so the ordering can be tested without Kafka. */
    public interface Log {
        /** Partitions the topic has in Kafka now: asked of Kafka, not taken from the producer's metadata. */
        int partitionCount();

        /** Partitions the producer knows now: a send to a higher one waits for its metadata on the sending thread. */
        int producerPartitionCount();

        /**
         * Sends to {@code partition}; a negative one means Kafka's own choice by key. False if the
         * producer refused it at once (its metadata could not be had in time, say), {@code
         * acknowledged} having heard the error already.
         */
        boolean send(int partition, byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged);

        /** Returns when every record sent so far is acknowledged (or failed). */
        void flush();

        /** The end offset of each of the first {@code partitions} partitions. */
        Map<Integer, Long> endOffsets(int partitions);

        /** Per partition, the offset the routing group has routed up to (its committed offset; missing: 0). */
        Map<Integer, Long> routedUpTo();
    }

    /** Hears when this node begins moving topics, and how each move ended: in order, or with messages let go at a bound. */
    public interface Outcomes {
        Outcomes NONE = (from, to, inOrder) -> {
        };

        /** Called with the partitioner's lock held: hand anything slow to another thread. */
        default void began(int from, int to) {
        }

        void moved(int from, int to, boolean inOrder);
    }

    /** A move under way on this node: topics go from {@code from} partitions to {@code to}. */
    public record Move(int from, int to) {
    }

    /** How messages are spread now; replaced, never changed, so a sender sees one whole mapping. */
    private static final class Mapping {
        /** 0 until the count is first known: Kafka's partitioner then places messages, by the same rule. */
        final int count;
        /** While topics move to the partitions of a growth, or null. */
        final Growth growth;
        /** Senders between choosing a partition by this mapping and handing the record to the producer. */
        final AtomicInteger sending = new AtomicInteger();

        Mapping(int count, Growth growth) {
            this.count = count;
            this.growth = growth;
        }
    }

    private record Held(int partition, int from, byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged) {
        long bytes() {
            return (long) key.length + value.length;
        }
    }

    /**
     * One growth of the count. An old partition is waiting (its moving topics' messages are held),
     * then ready (its held messages were sent, and its topics' messages go straight to their new
     * partitions).
     */
    private static final class Growth {
        final int from;
        final int to;
        final long deadline;
        /** Per old partition, the offset the routing group must have committed; null until known. */
        long[] mustRouteTo;
        final boolean[] ready;
        final ArrayDeque<Held> held = new ArrayDeque<>();
        long heldBytes;
        /** Partitions the producer knows: messages for higher ones stay held until it does. */
        int sendable;
        /** When every old partition was found routed, or {@link #NOT_YET}. */
        long allReadyAt = NOT_YET;
        /** Set with the last release: nothing is held any more. */
        boolean ended;
        /** The node stops once every old partition is routed: end without waiting for the producer, order kept. */
        boolean endNow;
        /** Why the wait ended early, or null. */
        String givenUp;

        Growth(int from, int to, long deadline) {
            this.from = from;
            this.to = to;
            this.deadline = deadline;
            this.ready = new boolean[from];
            this.sendable = from;
        }
    }

    private static final long NOT_YET = Long.MIN_VALUE;
    /**
     * Answers in a row that the topic has fewer partitions before that is believed: Kafka never
     * removes partitions (only a topic deleted and made again has fewer), while a broker whose
     * metadata lags can still answer the count from before a growth.
     */
    private static final int SMALLER_ANSWERS = 3;
    /** How long, once every old partition is routed, messages for partitions the producer does not know yet stay held. */
    private static final long LEARN_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /**
     * Past its longest wait and {@link #LEARN_WAIT_NANOS}, a move under way when this node learnt
     * the count has ended; a report of it heard later is stale (a node that died moving, say).
     */
    private static final long JOIN_SLACK_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    private final Log log;
    private final long maxHoldNanos;
    private final long maxHeldBytes;
    private final LongSupplier nanoTime;
    /** This node's last acknowledged offset per partition (the producer's I/O thread writes it). */
    private final Map<Integer, AtomicLong> lastAcknowledged = new ConcurrentHashMap<>();
    /** Where a growth's old partitions end is read (it waits for Kafka): not on the thread that enforces the bounds. */
    private final Executor snapshots;
    private final Outcomes outcomes;
    /** Serialises growths, their release, and stopping. */
    private final Object moves = new Object();
    /** Set when the node stops (or the thread following the count does): no growth is held any more. */
    private boolean stopped;
    /** Consecutive answers of a smaller count (under {@code moves}). */
    private int smallerAnswers;
    /** This node first saw the count as it is now and has not moved since: it may join a move others report (under {@code moves}). */
    private boolean mayJoin;
    /** When this node first learnt the count (under {@code moves}). */
    private long countLearntAt;
    private volatile Mapping mapping = new Mapping(0, null);

    /**
     * @param align how long after moving this node reads where the old partitions end: long enough
     *        for every other node to have moved too
     */
    public MsgAllPartitioner(Log log, java.time.Duration maxHold, java.time.Duration align, long maxHeldBytes, Outcomes outcomes) {
        this(log, maxHold, maxHeldBytes, System::nanoTime, task -> Thread.ofPlatform().daemon().name("tbmq-msg-all-growth").start(() -> {
            sleep(align);
            task.run();
        }), outcomes);
    }

    private static void sleep(java.time.Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    MsgAllPartitioner(Log log, java.time.Duration maxHold, long maxHeldBytes, LongSupplier nanoTime, Executor snapshots) {
        this(log, maxHold, maxHeldBytes, nanoTime, snapshots, Outcomes.NONE);
    }

    MsgAllPartitioner(Log log, java.time.Duration maxHold, long maxHeldBytes, LongSupplier nanoTime, Executor snapshots,
            Outcomes outcomes) {
        this.log = log;
        this.maxHoldNanos = maxHold.toNanos();
        this.maxHeldBytes = maxHeldBytes;
        this.nanoTime = nanoTime;
        this.snapshots = snapshots;
        this.outcomes = outcomes;
    }

    /** Kafka's rule for a keyed record, so placing records ourselves changes nothing while the count stays. */
    static int partition(byte[] key, int count) {
        return Utils.toPositive(Utils.murmur2(key)) % count;
    }

    /** Sends {@code value} under {@code key} (the MQTT topic), now or once the key's old partition is routed. */
    public void send(byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged) {
        Mapping m;
        while (true) {
            m = mapping;
            m.sending.incrementAndGet();
            if (mapping == m) {
                break;
            }
            m.sending.decrementAndGet();
        }
        try {
            int partition = m.count == 0 ? -1 : partition(key, m.count);
            Growth g = m.growth;
            if (g != null) {
                int from = partition(key, g.from);
                if (from != partition && hold(g, new Held(partition, from, key, value, acknowledged))) {
                    return;
                }
            }
            sendNow(partition, key, value, acknowledged);
        } finally {
            m.sending.decrementAndGet();
        }
    }

    private boolean sendNow(int partition, byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged) {
        return log.send(partition, key, value, (p, offset, error) -> {
            if (error == null) {
                lastAcknowledged.computeIfAbsent(p, x -> new AtomicLong(-1)).accumulateAndGet(offset, Math::max);
            }
            acknowledged.acknowledged(p, offset, error);
        });
    }

    /**
     * Queues a moving topic's message unless its old partition is ready and the producer knows its
     * new one; false if it may go now.
     */
    private boolean hold(Growth g, Held message) {
        synchronized (g) {
            // Once the growth has ended nothing would release it: a sender that chose the partition before goes on.
            if (g.ended || (g.ready[message.from()] && message.partition() < g.sendable)) {
                return false;
            }
            g.held.add(message);
            g.heldBytes += message.bytes();
            if (g.heldBytes > maxHeldBytes && !g.ready[message.from()]) {
                // Released by the next advance(), within a tenth of a second.
                g.givenUp = "past " + maxHeldBytes + " bytes";
            }
            return true;
        }
    }

    /** Messages waiting for their old partition now. */
    public int held() {
        Growth g = mapping.growth;
        if (g == null) {
            return 0;
        }
        synchronized (g) {
            return g.held.size();
        }
    }

    /** Whether topics are moving to new partitions now. */
    public boolean moving() {
        return mapping.growth != null;
    }

    /**
     * Reads the partition count and starts moving topics if it grew. Where the old partitions end
     * is read on another thread ({@code snapshots}), since it waits for Kafka; meanwhile
     * {@link #advance} still ends the wait at its bounds. On one thread, with {@link #advance}.
     */
    public void refresh() {
        if (mapping.growth != null) {
            return;
        }
        // Read before taking the lock: it can wait for Kafka's metadata, and stopping must not.
        int count = log.partitionCount();
        synchronized (moves) {
            Mapping m = mapping;
            if (count >= m.count) {
                smallerAnswers = 0;
            } else if (++smallerAnswers < SMALLER_ANSWERS) {
                return;
            }
            if (m.growth != null || count == m.count) {
                return;
            }
            if (stopped || m.count == 0 || count < m.count) {
                // The first count (Kafka placed the messages before by the same rule), a topic made again
                // smaller, or nothing held any more.
                if (count < m.count) {
                    lastAcknowledged.clear(); // offsets of the topic as it was
                }
                mayJoin = !stopped && m.count == 0;
                countLearntAt = nanoTime.getAsLong();
                mapping = new Mapping(count, null);
                return;
            }
            begin(m, m.count, count, "");
        }
    }

    /**
     * Joins the move from {@code from} to {@code to} partitions that node {@code by} reports, if
     * this node first saw the count after that growth (it started during the move) and has not
     * moved since: its moving topics then wait for their old partitions as on the other nodes, so a
     * client that published to one of them and reconnects here keeps its order. A node joins at
     * most one move, and only while a move under way when it learnt the count can still be: its
     * longest wait ({@code maxHold}) and a little more. Returns whether it joined.
     */
    public boolean join(int from, int to, String by) {
        synchronized (moves) {
            Mapping m = mapping;
            if (mayJoin && nanoTime.getAsLong() - countLearntAt > maxHoldNanos + LEARN_WAIT_NANOS + JOIN_SLACK_NANOS) {
                mayJoin = false;
            }
            if (!mayJoin || stopped || m.growth != null || m.count != to || from <= 0 || from >= to) {
                return false;
            }
            begin(m, from, to, " (joining the move of " + by + ", under way as this node started)");
            return true;
        }
    }

    /** The move under way on this node, or null. */
    public Move move() {
        Growth g = mapping.growth;
        return g == null ? null : new Move(g.from, g.to);
    }

    /** Holds the topics that move from {@code from} partitions to {@code to}; under {@code moves}. */
    private void begin(Mapping before, int from, int to, String how) {
        mayJoin = false;
        Growth g = new Growth(from, to, nanoTime.getAsLong() + maxHoldNanos);
        mapping = new Mapping(to, g);
        LOG.infof("tbmq.msg.all grew from %d to %d partitions%s: topics that move wait until every node moved and their old "
                + "partition is routed (at most %d ms)", from, to, how, maxHoldNanos / 1_000_000);
        outcomes.began(from, to);
        snapshots.execute(() -> snapshot(before, g));
    }

    /** What the routing group must have committed in each old partition before its moving topics go on. */
    private void snapshot(Mapping before, Growth g) {
        long[] mustRouteTo = new long[g.from];
        try {
            // Senders that chose an old partition still hand their records over; theirs count as before the growth.
            awaitSenders(before);
            log.flush();
            for (int p = 0; p < g.from; p++) {
                AtomicLong last = lastAcknowledged.get(p);
                mustRouteTo[p] = last == null ? 0 : last.get() + 1;
            }
            // The end covers also records whose outcome this node does not know (timed out, perhaps written).
            log.endOffsets(g.from).forEach((p, end) -> {
                if (p < mustRouteTo.length && end > mustRouteTo[p]) {
                    mustRouteTo[p] = end;
                }
            });
        } catch (RuntimeException e) {
            LOG.warnf("tbmq.msg.all grew from %d to %d partitions, but where its old partitions end could not be read (%s): "
                    + "moving topics wait for this node's acknowledged records only", g.from, g.to, e.toString());
        }
        synchronized (g) {
            g.mustRouteTo = mustRouteTo;
        }
    }

    /**
     * Lets the topics whose old partition the routing group has passed go on; returns true when no
     * topic waits any more. Their held messages are sent in order under the growth's lock, so a
     * newer message of theirs cannot pass them; their publishers wait meanwhile, as they would
     * for a full producer buffer.
     */
    public boolean advance() {
        synchronized (moves) {
            Mapping m = mapping;
            Growth g = m.growth;
            if (g == null) {
                return true;
            }
            boolean giveUp;
            boolean allReady;
            synchronized (g) {
                allReady = g.allReadyAt != NOT_YET;
                // Once every old partition is routed, order is kept whatever follows: the wait is over.
                if (g.givenUp == null && !allReady && nanoTime.getAsLong() - g.deadline > 0) {
                    g.givenUp = (maxHoldNanos / 1_000_000) + " ms, the longest wait";
                }
                giveUp = g.givenUp != null;
                if (g.mustRouteTo == null && !giveUp) {
                    return false;
                }
            }
            Map<Integer, Long> routed = Map.of();
            if (!giveUp && !allReady) {
                try {
                    routed = log.routedUpTo();
                } catch (RuntimeException e) {
                    LOG.debugf("reading where tbmq.msg.all is routed up to failed (%s); asking again", e.toString());
                }
            }
            int released = 0;
            synchronized (g) {
                boolean all = true;
                for (int p = 0; p < g.from; p++) {
                    if (!g.ready[p] && (giveUp || routed.getOrDefault(p, 0L) >= g.mustRouteTo[p])) {
                        g.ready[p] = true;
                    }
                    all &= g.ready[p];
                }
                if (giveUp && !g.held.isEmpty()) {
                    LOG.warnf("tbmq.msg.all grew from %d to %d partitions: %d messages of topics that moved waited (%s); they go on, "
                            + "and a subscriber may get those topics' messages out of order once", g.from, g.to, g.held.size(),
                            g.givenUp);
                }
                // In arrival order; a topic's messages share an old partition, so they leave together. A send to a
                // partition the producer does not know yet waits here for its metadata, not on an event loop; once that
                // failed, the others for such partitions fail at once rather than each after the producer's max block.
                Exception noMetadata = null;
                for (Iterator<Held> it = g.held.iterator(); it.hasNext();) {
                    Held h = it.next();
                    if (g.ready[h.from()]) {
                        it.remove();
                        g.heldBytes -= h.bytes();
                        released++;
                        boolean unknown = h.partition() >= g.sendable;
                        if (unknown && noMetadata != null) {
                            h.acknowledged().acknowledged(h.partition(), -1, noMetadata);
                            continue;
                        }
                        Exception[] refused = new Exception[1];
                        try {
                            boolean handed = sendNow(h.partition(), h.key(), h.value(), (p, offset, error) -> {
                                refused[0] = error;
                                h.acknowledged().acknowledged(p, offset, error);
                            });
                            if (!handed && unknown && refused[0] instanceof org.apache.kafka.common.errors.TimeoutException
                                    && !(refused[0] instanceof org.apache.kafka.clients.producer.BufferExhaustedException)) {
                                noMetadata = refused[0];
                            }
                        } catch (RuntimeException | Error e) {
                            h.acknowledged().acknowledged(h.partition(), -1, e instanceof Exception x ? x : new IllegalStateException(e));
                            if (e instanceof Error) {
                                throw e;
                            }
                        }
                    }
                }
                // Read after the sends above, which may have made the producer fetch the new partitions.
                g.sendable = Math.max(g.sendable, producerPartitionCount(g.sendable));
                if (!all) {
                    return false;
                }
                long now = nanoTime.getAsLong();
                if (g.allReadyAt == NOT_YET) {
                    g.allReadyAt = now;
                }
                // A held message sent above makes the producer learn the partitions. A node that had none gives it a
                // moment more, then lets a client's thread wait for the producer's metadata once.
                if (g.sendable < g.to && !giveUp && !g.endNow && now - g.allReadyAt < LEARN_WAIT_NANOS) {
                    return false;
                }
                g.ended = true;
            }
            mapping = new Mapping(g.to, null);
            // A sender still on the growth's mapping hands its record over before a later growth looks at the ends.
            awaitSenders(m);
            LOG.infof("tbmq.msg.all: every topic is on its partition of %d now (%d held messages sent in the last step)", g.to,
                    released);
            boolean inOrder;
            synchronized (g) {
                inOrder = g.givenUp == null;
            }
            outcomes.moved(g.from, g.to, inOrder);
            return true;
        }
    }

    /**
     * Holds no message from now on: what is held goes on now, in order, and a later growth is not
     * waited for (the node is stopping, or nothing follows the count any more).
     */
    public void stop(String why) {
        synchronized (moves) {
            stopped = true;
            Growth g = mapping.growth;
            if (g == null) {
                return;
            }
            synchronized (g) {
                if (g.allReadyAt == NOT_YET) {
                    g.givenUp = why;
                } else {
                    g.endNow = true;
                }
            }
            advance();
        }
    }

    private int producerPartitionCount(int otherwise) {
        try {
            return log.producerPartitionCount();
        } catch (RuntimeException e) {
            return otherwise;
        }
    }

    private static void awaitSenders(Mapping m) {
        while (m.sending.get() > 0 && !Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(100_000);
        }
    }
}
