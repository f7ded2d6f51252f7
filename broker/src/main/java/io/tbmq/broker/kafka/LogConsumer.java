package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.jboss.logging.Logger;

import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Outcome;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * One consumer thread of a broker topic with at-least-once processing: each polled batch is
 * handed over whole; its offsets are committed (at most every commit interval) only when the
 * handler's future completes, and that of every batch polled before it; if it fails, the consumer
 * seeks back to the batch and tries again after a pause, so nothing that was acknowledged upstream
 * is skipped (commit only after the store acknowledged, as in the TBMQ paper).
 *
 * <p>With a read-ahead, the consumer polls on while earlier batches are still being processed, up
 * to that many records past the oldest unfinished one: a batch waiting for one Redis master does
 * not hold up the messages behind it for everyone else. The handler must then keep its own order
 * where order matters (the routing consumer's DEVICE writes queue per client). Without one, each
 * batch is finished before the next poll. A batch that fails or outlives the handler timeout is
 * read again together with every batch polled after it, which are cancelled, and its records are
 * marked as possible replays ({@link Replays}): some of their copies were delivered already. Not so
 * a batch whose {@link Outcome} is sent and that waits only for a store retrying on its own (a full
 * or unreachable Redis master): the consumer waits for it as long as it takes, reading on up to the
 * read-ahead and then polling with its partitions paused, since reading it again would only send
 * its other copies twice, every handler timeout, for as long as the store refuses.
 *
 * <p>A clean hand-over replays nothing: offsets stay owed until a commit covering them succeeds
 * (an asynchronous commit refused mid-rebalance is retried, not dropped), a partition is committed
 * synchronously before it is given up, and a consumer that stops on purpose commits before it
 * leaves the group. Those hand-over commits are marked as such, so the next owner knows whether
 * its predecessor left cleanly; if not (a crash, or a member the group expelled), the records up to
 * the partition's end at assignment may have been processed already, and the handler is told
 * ({@link Replays}) so that redelivered copies carry DUP. The first member to read a partition
 * commits a start marker before processing any of it, so a partition without any commit was never
 * read: a new cluster's first messages, or those of a partition just added, are not marked.
 */
public final class LogConsumer implements Runnable {
    private static final Logger LOG = Logger.getLogger(LogConsumer.class);
    private static final RateLimitedLog RETRIES = new RateLimitedLog(LOG, 1);
    /** The first wait before partitions whose hand-over could not be looked up are looked up again; doubled up to the last. */
    private static final Duration FIRST_CHECK_RETRY = Duration.ofSeconds(1);
    private static final Duration LAST_CHECK_RETRY = Duration.ofSeconds(30);
    /** Records older than this when polled, or a batch slower than this to process, are reported. */
    private static final long SLOW_MILLIS = 2_000;
    /** A group completing another rebalance refuses commits for a moment; a revocation waits this long at most. */
    private static final int HAND_OVER_ATTEMPTS = 30;
    private static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(5);
    /** Empty polls in a row before a consumer that may rest does. */
    private static final int QUIET_POLLS_BEFORE_REST = 3;
    private static final Duration POLL = Duration.ofMillis(200);
    /** A resting consumer's look: a fetch or two (the fetch wait is 10 ms by default). */
    private static final Duration LOOK_POLL = Duration.ofMillis(20);

    /** Commit metadata of a hand-over: everything before the offset was processed, nothing after it. */
    static final String HANDED_OVER = "handed-over";
    /** Commit metadata of the first member to read a partition: it may process records from here on. */
    static final String STARTED = "started";

    private final Supplier<Consumer<byte[], byte[]>> factory;
    private final String topic;
    private final BatchHandler handler;
    private final Duration handlerTimeout;
    /** Records that may be polled past the oldest unfinished batch; 0: one batch at a time. */
    private final int readAhead;
    private final Rest rest;
    /** Partitions paused by {@link #rest}; consumer thread only. */
    private boolean resting;
    /** Partitions paused by {@link #hold}; consumer thread only. */
    private boolean held;
    /** The batch last reported as waiting for the store. */
    private InFlight reportedWaiting;
    private long restingSince;
    private int quietPolls;
    private Duration nextPoll = POLL;
    /** Batches handed to the handler and not yet done, oldest first; consumer thread only. */
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private int inFlightRecords;
    private long retryBackoff = 100;
    private final long commitIntervalNanos;
    private long lastCommit = System.nanoTime();
    private final UncommittedOffsets uncommitted = new UncommittedOffsets();
    /** Per partition, the end of a crashed predecessor's possible progress: records before it may be replays. */
    private final Map<Integer, Long> replayEnds = new HashMap<>();
    /**
     * Assigned partitions whose hand-over could not be looked up yet (the group coordinator did not
     * answer): paused until it can be, since what they replay is not known. Consumer thread only.
     */
    private final Set<TopicPartition> unchecked = new HashSet<>();
    /** Since when (nanoTime) some partition has been unchecked; 0 while none is. */
    private volatile long uncheckedSince;
    private long nextCheck;
    /** A lookup was refused because the group was rebalancing again: the next assignment callback retries it. */
    private boolean checkAfterRebalance;
    private Duration checkRetry = FIRST_CHECK_RETRY;
    /**
     * Start markers this member sent for partitions it still holds unchecked, whether or not Kafka
     * stored them (a commit can time out after the coordinator wrote it): finding one of them is
     * finding a partition nobody read. Consumer thread only.
     */
    private final Map<TopicPartition, Marker> markersSent = new HashMap<>();
    private final RateLimitedLog checks = new RateLimitedLog(LOG, 1, Duration.ofMinutes(1));
    /** A start marker this member sent, and what it found the partition to replay then (null: nothing). */
    private record Marker(OffsetAndMetadata commit, Long replayEnd) {
    }

    /**
     * Partitions sought back by {@link #abandon} whose records have not all been handed to the
     * handler again: since when (nanoTime) the oldest of them has waited, and the offset up to which
     * they were read before. Consumer thread only.
     */
    private final Map<TopicPartition, SoughtBack> soughtBack = new HashMap<>();

    private record SoughtBack(long waitingSince, long end) {
    }

    /** Set when the consumer closes: the revocation Kafka's close calls must not commit again. */
    private boolean closing;
    private final Replays replays = (partition, offset) -> {
        Long end = replayEnds.get(partition);
        return end != null && offset < end;
    };
    private volatile boolean running = true;
    /** Why this consumer stopped without being asked to; null while it runs or after a stop on purpose. */
    private volatile RuntimeException failure;
    private volatile Consumer<byte[], byte[]> consumer;
    /** Records behind the partitions' ends, summed over this consumer's partitions (metric {@code tbmq_kafka_consumer_lag}). */
    private volatile long lag;
    private long lagMeasured;
    /**
     * Since when (nanoTime) the oldest record handed to the handler and not yet done has waited,
     * counted from the first time it was handed over, through reads again; 0 while nothing waits
     * (metric {@code tbmq_kafka_consumer_stalled_seconds}).
     */
    private volatile long stalledSince;
    /** Where a message waits when deliveries stall: in Kafka before this consumer, or in the handler. */
    private final RateLimitedLog slow = new RateLimitedLog(LOG, 1);

    public LogConsumer(Properties properties, String topic, BatchHandler handler, Duration handlerTimeout,
            Duration commitInterval, int readAhead, Rest rest) {
        this(() -> new KafkaConsumer<>(withoutAutoCommit(properties)), topic, handler, handlerTimeout, commitInterval, readAhead,
                rest);
    }

    /** With the consumer {@code factory} makes (a test's mock, say); it must not commit on its own. */
    LogConsumer(Supplier<Consumer<byte[], byte[]>> factory, String topic, BatchHandler handler, Duration handlerTimeout,
            Duration commitInterval, int readAhead) {
        this(factory, topic, handler, handlerTimeout, commitInterval, readAhead, Rest.NEVER);
    }

    LogConsumer(Supplier<Consumer<byte[], byte[]>> factory, String topic, BatchHandler handler, Duration handlerTimeout,
            Duration commitInterval, int readAhead, Rest rest) {
        this.rest = rest;
        this.factory = factory;
        this.topic = topic;
        this.handler = handler;
        this.handlerTimeout = handlerTimeout;
        this.commitIntervalNanos = commitInterval.toNanos();
        this.readAhead = Math.max(0, readAhead);
    }

    /**
     * When a consumer may stop fetching: while {@code mayRest} says nobody can be writing to its log
     * (a node alone in its cluster, for its downlink topics) and its polls have found nothing. An idle
     * fetch costs Kafka and this node a request every fetch wait (about 100 a second); a resting
     * consumer still looks (one 20 ms poll) once every {@code look}, in case a writer appeared unseen,
     * and fetches again within a poll (200 ms) of {@code mayRest} turning false. Its lag metric is
     * the one of its last fetch.
     */
    public record Rest(java.util.function.BooleanSupplier mayRest, Duration look) {
        public static final Rest NEVER = new Rest(() -> false, Duration.ZERO);
    }

    /**
     * A polled batch the handler has: per partition its first and next offset, and the handler's
     * outcome; waitingSince is when its oldest record was first handed over (earlier than
     * startedNanos for records read again).
     */
    private record InFlight(Map<TopicPartition, long[]> offsets, int records, long startedNanos, long waitingSince,
            CompletableFuture<Void> sent, CompletableFuture<Void> done) {
    }

    private static Properties withoutAutoCommit(Properties properties) {
        Properties p = new Properties();
        p.putAll(properties);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return p;
    }

    @Override
    public void run() {
        Consumer<byte[], byte[]> c = factory.get();
        // Only a loop that ended because stop() was called commits on leaving: after a failure,
        // positions may be past records whose processing never started.
        boolean onPurpose = false;
        try {
            consumer = c;
            c.subscribe(List.of(topic), new HandOver(c));
            while (running) {
                // Before the poll: a stop waking this lookup up must find no record polled and not handed over.
                checkAgain(c);
                ConsumerRecords<byte[], byte[]> records = c.poll(nextPoll);
                rest(c, records.isEmpty());
                measureLag(c);
                if (!records.isEmpty()) {
                    reportLate(records);
                    start(records);
                }
                settle(c);
                commitDue(c);
            }
            onPurpose = true;
        } catch (WakeupException e) {
            if (running) {
                failure = e;
                throw e;
            }
            onPurpose = true;
        } catch (RuntimeException e) {
            LOG.errorf(e, "consumer of %s stopped", topic);
            failure = e;
            throw e;
        } catch (Error e) {
            // Said to liveness like any other failure: this node's share of the partitions goes unread.
            LOG.errorf(e, "consumer of %s stopped", topic);
            failure = new IllegalStateException(e.toString(), e);
            throw e;
        } finally {
            if (onPurpose) {
                // Leaving on purpose: the successors start exactly where this consumer got to.
                drain();
                commitBeforeHandOver(c, c.assignment(), "leaving the group");
                cancelInFlight();
            }
            // Closing revokes every partition once more (onLeavePrepare): committed above on purpose,
            // or left to the successor as after a crash, they must not be committed again.
            closing = true;
            // A node that stops on purpose leaves the group at once, so its partitions move now;
            // otherwise static membership would keep them unassigned until the session timeout.
            try {
                c.close(CloseOptions.groupMembershipOperation(onPurpose ? CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                        : CloseOptions.GroupMembershipOperation.DEFAULT).withTimeout(Duration.ofSeconds(5)));
            } finally {
                stalledSince = 0;
                uncheckedSince = 0;
            }
        }
    }

    /**
     * Pauses the partitions after a few empty polls while {@link Rest#mayRest}; resumes them for good
     * when it says otherwise, or for one short poll (a look) every {@link Rest#look}.
     */
    private void rest(Consumer<byte[], byte[]> c, boolean empty) {
        nextPoll = POLL;
        boolean mayRest = rest.mayRest().getAsBoolean();
        if (resting) {
            if (!mayRest) {
                if (!held) {
                    c.resume(checked(c.paused()));
                }
                resting = false;
                quietPolls = 0;
            } else if (System.nanoTime() - restingSince >= rest.look().toNanos()) {
                // One short poll; if it finds nothing, the consumer rests again at once.
                if (!held) {
                    c.resume(checked(c.paused()));
                }
                resting = false;
                quietPolls = QUIET_POLLS_BEFORE_REST - 1;
                nextPoll = LOOK_POLL;
            } else {
                // Partitions assigned meanwhile rest too.
                c.pause(c.assignment());
            }
            return;
        }
        // A consumer still joining its group has nothing to find yet: it does not count as quiet.
        if (!empty || !inFlight.isEmpty() || !soughtBack.isEmpty() || !mayRest || c.assignment().isEmpty()) {
            quietPolls = 0;
            return;
        }
        if (++quietPolls >= QUIET_POLLS_BEFORE_REST) {
            c.pause(c.assignment());
            resting = true;
            restingSince = System.nanoTime();
        }
    }

    /** Records this consumer is behind, as of its last fetch responses; 0 before it knows. */
    public String topic() {
        return topic;
    }

    public long lag() {
        return lag;
    }

    /**
     * Seconds the records handed to the handler have waited without any batch finishing, or some
     * partition has not been read because its hand-over could not be looked up, whichever is longer:
     * a Redis master that stays full or unreachable, a write that keeps failing, or a group
     * coordinator that does not answer holds partitions up while the lag may stay small. 0 while
     * nothing waits.
     */
    public double stalledSeconds() {
        long now = System.nanoTime();
        long inFlightSince = stalledSince;
        long notReadSince = uncheckedSince;
        long longest = Math.max(inFlightSince == 0 ? 0 : now - inFlightSince, notReadSince == 0 ? 0 : now - notReadSince);
        return longest / 1e9;
    }

    /** Once a second, from what the last fetches said about the partitions' ends (no request of its own). */
    private void reportLate(ConsumerRecords<byte[], byte[]> records) {
        long oldest = Long.MAX_VALUE;
        for (ConsumerRecord<byte[], byte[]> r : records) {
            oldest = Math.min(oldest, r.timestamp());
        }
        long age = System.currentTimeMillis() - oldest;
        if (oldest > 0 && age >= SLOW_MILLIS) {
            slow.info("consumer of %s polled records written %d ms ago (%d records, partitions %s)", topic, age, records.count(),
                    records.partitions().stream().map(TopicPartition::partition).sorted().toList());
        }
    }

    private void measureLag(Consumer<byte[], byte[]> c) {
        long now = System.nanoTime();
        if (now - lagMeasured < 1_000_000_000L) {
            return;
        }
        lagMeasured = now;
        long sum = 0;
        for (TopicPartition tp : c.assignment()) {
            sum += c.currentLag(tp).orElse(0);
        }
        lag = sum;
    }

    /** Commits before partitions move on, and forgets what is no longer this consumer's. */
    private final class HandOver implements ConsumerRebalanceListener {
        private final Consumer<byte[], byte[]> c;

        HandOver(Consumer<byte[], byte[]> c) {
            this.c = c;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (closing) {
                forget(partitions);
                return;
            }
            drain();
            commitBeforeHandOver(c, partitions, "giving up " + partitions);
            if (!inFlight.isEmpty()) {
                // What is kept is read again from the oldest unfinished batch; what moves, by its next owner.
                abandon(c, "handing over " + partitions, false, partitions);
            }
            forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (checkAfterRebalance) {
                // The rebalance that refused a lookup completed: it can be tried again now.
                checkAfterRebalance = false;
                nextCheck = System.nanoTime();
            }
            if (!partitions.isEmpty()) {
                if (held || resting) {
                    c.pause(partitions);
                }
                // Which node reads which partition, and since when: what a pause during a rebalance is traced by.
                LOG.infof("consumer of %s now reads partitions %s", topic,
                        c.assignment().stream().map(TopicPartition::partition).sorted().toList());
                check(c, partitions, COMMIT_TIMEOUT);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            // Expelled from the group (missed heartbeats): another member owns them already; a
            // commit would be refused. Its successor replays from the last commit.
            Map<TopicPartition, OffsetAndMetadata> owed = uncommitted.toCommit(partitions);
            if (!owed.isEmpty()) {
                LOG.warnf("consumer of %s lost %s to the group without committing %s: those records are processed again",
                        topic, partitions, owed);
            }
            for (InFlight b : inFlight) {
                b.offsets().keySet().removeAll(partitions);
            }
            forget(partitions);
        }
    }

    private void forget(Collection<TopicPartition> partitions) {
        uncommitted.forget(partitions);
        partitions.forEach(markersSent::remove);
        soughtBack.keySet().removeAll(partitions);
        measureStall();
        if (unchecked.removeAll(partitions) && unchecked.isEmpty()) {
            uncheckedSince = 0;
        }
        partitions.forEach(tp -> replayEnds.remove(tp.partition()));
    }

    /**
     * Looks up how {@code partitions} were handed over ({@link #findReplays}) before any of their
     * records is processed; if the group coordinator does not answer within {@code timeout}, they
     * stay paused and are looked up again, after 1 s, then less and less often (up to every 30 s):
     * processed meanwhile, redeliveries would go out without DUP, or a never-read partition without
     * its start marker. They count as unchecked until it succeeded, also while a stop interrupts it.
     */
    private void check(Consumer<byte[], byte[]> c, Collection<TopicPartition> partitions, Duration timeout) {
        if (unchecked.isEmpty()) {
            uncheckedSince = System.nanoTime();
        }
        unchecked.addAll(partitions);
        try {
            findReplays(c, partitions, timeout);
        } catch (WakeupException e) {
            throw e;
        } catch (RebalanceInProgressException e) {
            // The group is rebalancing again: the next polls rejoin it; the lookup follows the
            // assignment, or a poll later, not on every loop.
            c.pause(partitions);
            checkAfterRebalance = true;
            nextCheck = System.nanoTime() + POLL.toNanos();
            return;
        } catch (RuntimeException e) {
            c.pause(partitions);
            nextCheck = System.nanoTime() + checkRetry.toNanos();
            checkRetry = checkRetry.multipliedBy(2).compareTo(LAST_CHECK_RETRY) > 0 ? LAST_CHECK_RETRY : checkRetry.multipliedBy(2);
            checks.warn(null, "consumer of %s cannot look up how %s were handed over (%s): they are not read until it can",
                    topic, partitions, e.toString());
            return;
        }
        unchecked.removeAll(partitions);
        partitions.forEach(markersSent::remove);
        if (unchecked.isEmpty()) {
            uncheckedSince = 0;
            checkRetry = FIRST_CHECK_RETRY;
        }
        if (!held && !resting) {
            c.resume(partitions);
        }
    }

    private void checkAgain(Consumer<byte[], byte[]> c) {
        if (unchecked.isEmpty() || System.nanoTime() - nextCheck < 0) {
            return;
        }
        unchecked.retainAll(c.assignment());
        if (unchecked.isEmpty()) {
            uncheckedSince = 0;
            return;
        }
        // Each call bounded by the wait before this retry, so a coordinator that does not answer holds up the other partitions little.
        check(c, List.copyOf(unchecked), checkRetry.compareTo(COMMIT_TIMEOUT) < 0 ? checkRetry : COMMIT_TIMEOUT);
    }

    /** {@code partitions} less those not looked up yet. */
    private Collection<TopicPartition> checked(Collection<TopicPartition> partitions) {
        Collection<TopicPartition> checked = new HashSet<>(partitions);
        checked.removeAll(unchecked);
        return checked;
    }

    /**
     * A partition whose last commit is not a hand-over was left by a member that crashed or was
     * expelled: it may have processed records after that commit, up to the partition's end now. A
     * partition without any commit was read by nobody, unless its log no longer starts at 0
     * (retention or a deletion removed records): its offsets may have expired (a group empty for
     * Kafka's offsets retention), so it is treated as left by a crash.
     *
     * <p>Before reading a partition handed over cleanly, or never read, this member replaces that
     * commit with a {@link #STARTED} marker at the same place: should it crash before its first
     * commit of that partition (which may be long, behind a poll waiting for the store), its
     * successor must find that someone was reading it. Throws when Kafka does not answer, having
     * changed nothing but the markers it remembers sending ({@link #beforeMarker}).
     */
    private void findReplays(Consumer<byte[], byte[]> c, Collection<TopicPartition> partitions, Duration timeout) {
        Map<TopicPartition, OffsetAndMetadata> committed = c.committed(new HashSet<>(partitions), timeout);
        List<TopicPartition> unclean = new ArrayList<>();
        List<TopicPartition> neverCommitted = new ArrayList<>();
        Map<TopicPartition, Marker> markers = new HashMap<>();
        Map<Integer, Long> found = new HashMap<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata last = committed.get(tp);
            Marker mine = markersSent.get(tp);
            if (last != null && mine != null && mine.commit().offset() == last.offset() && STARTED.equals(last.metadata())) {
                // This member's own marker, stored though its commit timed out: what it found then still holds.
                if (mine.replayEnd() != null) {
                    found.put(tp.partition(), mine.replayEnd());
                }
            } else if (last == null) {
                neverCommitted.add(tp);
            } else if (HANDED_OVER.equals(last.metadata())) {
                markers.put(tp, new Marker(new OffsetAndMetadata(last.offset(), STARTED), null));
            } else {
                unclean.add(tp);
            }
        }
        if (!neverCommitted.isEmpty()) {
            c.beginningOffsets(neverCommitted, timeout).forEach((tp, start) -> {
                if (start == null || start > 0) {
                    unclean.add(tp);
                }
            });
        }
        if (!unclean.isEmpty()) {
            Map<TopicPartition, Long> ends = c.endOffsets(unclean, timeout);
            for (TopicPartition tp : unclean) {
                OffsetAndMetadata last = committed.get(tp);
                Long end = ends.get(tp);
                if (end != null && end > (last == null ? 0 : last.offset())) {
                    found.put(tp.partition(), end);
                }
            }
        }
        for (TopicPartition tp : neverCommitted) {
            Marker mine = markersSent.get(tp);
            markers.put(tp, new Marker(mine != null ? mine.commit() : new OffsetAndMetadata(c.position(tp, timeout), STARTED),
                    found.get(tp.partition())));
        }
        if (!markers.isEmpty()) {
            markersSent.putAll(markers);
            Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
            markers.forEach((tp, m) -> commits.put(tp, m.commit()));
            c.commitSync(commits, timeout);
        }
        if (!found.isEmpty()) {
            replayEnds.putAll(found);
            LOG.infof("consumer of %s took over partitions without a clean hand-over; records before %s may be redelivered (DUP)",
                    topic, found);
        }
    }

    /** Hands a polled batch to the handler; it is done when its future completes. */
    private void start(ConsumerRecords<byte[], byte[]> records) {
        Map<TopicPartition, long[]> offsets = new HashMap<>();
        for (TopicPartition tp : records.partitions()) {
            List<ConsumerRecord<byte[], byte[]>> list = records.records(tp);
            offsets.put(tp, new long[] {list.get(0).offset(), list.get(list.size() - 1).offset() + 1});
        }
        Outcome outcome;
        try {
            outcome = handler.handle(batch(records), replayEnds.isEmpty() ? Replays.NONE : replays);
        } catch (RuntimeException e) {
            outcome = Outcome.of(CompletableFuture.failedFuture(e));
        }
        long now = System.nanoTime();
        long waitingSince = now;
        boolean readAgain = false;
        for (Map.Entry<TopicPartition, long[]> e : offsets.entrySet()) {
            SoughtBack back = soughtBack.get(e.getKey());
            if (back != null) {
                // Records read again have waited since they were first handed over.
                waitingSince = back.waitingSince() - waitingSince < 0 ? back.waitingSince() : waitingSince;
                if (e.getValue()[1] >= back.end()) {
                    soughtBack.remove(e.getKey());
                    readAgain = true;
                }
            }
        }
        inFlight.addLast(new InFlight(offsets, records.count(), now, waitingSince, outcome.sent(), outcome.done()));
        inFlightRecords += records.count();
        if (readAgain) {
            measureStall();
        } else if (stalledSince == 0) {
            stalledSince = waitingSince == 0 ? 1 : waitingSince;
        }
    }

    /** The oldest wait among the batches in flight and the records sought back to be read again. */
    private void measureStall() {
        long oldest = 0;
        boolean any = false;
        for (InFlight b : inFlight) {
            if (!any || b.waitingSince() - oldest < 0) {
                oldest = b.waitingSince();
                any = true;
            }
        }
        for (SoughtBack back : soughtBack.values()) {
            if (!any || back.waitingSince() - oldest < 0) {
                oldest = back.waitingSince();
                any = true;
            }
        }
        stalledSince = !any ? 0 : oldest == 0 ? 1 : oldest;
    }

    /**
     * Takes in what the handler finished, oldest first; reads a failed or timed-out batch again
     * (not one waiting only for the store, see {@link #reasonToReadAgain}); and while the read-ahead
     * is used up, waits for the oldest batch before polling on, or, once that batch waits only for
     * the store, polls with the partitions paused until it is done.
     */
    private void settle(Consumer<byte[], byte[]> c) {
        while (true) {
            popFinished();
            InFlight head = inFlight.peekFirst();
            String why = head == null ? null : reasonToReadAgain(head);
            if (why != null) {
                release(c);
                abandon(c, why, true);
                return;
            }
            boolean full = head != null && (readAhead == 0 || inFlightRecords - head.records() >= readAhead);
            if (!full) {
                release(c);
                return;
            }
            if (!waitsForStore(head)) {
                await(head);
                continue;
            }
            // Possibly for hours (a full Redis master): polls go on, or the group would expel this
            // member, but with the partitions paused, so nothing is read past the read-ahead.
            if (!held) {
                LOG.infof("consumer of %s stops reading: %d records read past its oldest batch, which waits for the store (%s)",
                        topic, inFlightRecords - head.records(), spans(inFlight));
            }
            hold(c);
            awaitAtMost(head, POLL);
            if (!head.done().isDone()) {
                return;
            }
        }
    }

    /**
     * Why the batches in flight must be read again, or null. The oldest is, when it failed or is
     * overdue; unless all it waits for is the store, whose writes go on: read again, its other
     * copies would go out twice. Then a batch behind it that failed or is overdue is read again,
     * with it (its writes must stay in order with the oldest's).
     */
    private String reasonToReadAgain(InFlight head) {
        if (head.done().isCompletedExceptionally()) {
            return causeOf(head.done());
        }
        if (!overdue(head)) {
            return null;
        }
        if (!sent(head)) {
            return "not done after " + handlerTimeout.toMillis() + " ms";
        }
        reportWaiting(head);
        for (InFlight b : inFlight) {
            if (b.done().isCompletedExceptionally()) {
                return causeOf(b.done()) + ", behind a batch waiting for the store";
            }
            if (!b.done().isDone() && overdue(b) && !sent(b)) {
                return "not done after " + handlerTimeout.toMillis() + " ms, behind a batch waiting for the store";
            }
        }
        return null;
    }

    private boolean overdue(InFlight b) {
        return System.nanoTime() - b.startedNanos() >= handlerTimeout.toNanos();
    }

    /** Everything out but the store's writes; a batch whose partitions all went to another member is not waited for. */
    private static boolean sent(InFlight b) {
        return !b.offsets().isEmpty() && b.sent().isDone() && !b.sent().isCompletedExceptionally();
    }

    /** Overdue with everything out but what the store retries on its own. */
    private boolean waitsForStore(InFlight b) {
        return overdue(b) && sent(b) && !b.done().isDone();
    }

    /** Once per oldest batch: that it is not read again, and why. */
    private void reportWaiting(InFlight head) {
        if (head == reportedWaiting) {
            return;
        }
        reportedWaiting = head;
        LOG.infof("consumer of %s: a batch of %d records (%s) waits for the store after %d ms; its other copies went out,"
                + " so it is not read again: its writes keep trying, and the offsets after it are committed once it is stored",
                topic, head.records(), spans(List.of(head)), handlerTimeout.toMillis());
    }

    /** Per partition, the offsets in flight: "3@100-250". */
    private static List<String> spans(Collection<InFlight> batches) {
        Map<Integer, long[]> span = new HashMap<>();
        for (InFlight b : batches) {
            b.offsets().forEach((tp, range) -> span.merge(tp.partition(), range.clone(),
                    (a, o) -> new long[] {Math.min(a[0], o[0]), Math.max(a[1], o[1])}));
        }
        return span.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .map(e -> e.getKey() + "@" + e.getValue()[0] + "-" + (e.getValue()[1] - 1)).toList();
    }

    /**
     * Pauses every assigned partition while the read-ahead is used up behind a batch waiting for the
     * store. Never while resting ({@link #rest} pauses too): a consumer rests only with nothing in flight.
     */
    private void hold(Consumer<byte[], byte[]> c) {
        held = true;
        c.pause(c.assignment());
    }

    private void release(Consumer<byte[], byte[]> c) {
        if (held) {
            held = false;
            // Only what is still assigned: resuming a partition that went elsewhere throws.
            Collection<TopicPartition> paused = checked(c.paused());
            paused.retainAll(c.assignment());
            c.resume(paused);
        }
    }

    /** Waits until {@code batch} is done, at most {@code most}. */
    private static void awaitAtMost(InFlight batch, Duration most) {
        try {
            batch.done().get(most.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | CancellationException e) {
            // Looked at by the caller.
        }
    }

    /** Waits for the batches in flight, oldest first, until one fails or outlives the handler timeout. */
    private void drain() {
        while (!inFlight.isEmpty()) {
            InFlight head = inFlight.peekFirst();
            await(head);
            if (!head.done().isDone() || head.done().isCompletedExceptionally()) {
                return;
            }
            popFinished();
        }
    }

    /** Waits until {@code batch} is done or its handler timeout is up, whichever comes first. */
    private void await(InFlight batch) {
        long left = batch.startedNanos() + handlerTimeout.toNanos() - System.nanoTime();
        try {
            batch.done().get(Math.max(0, left), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | CancellationException e) {
            // Looked at by the caller.
        }
    }

    /** The finished batches at the head: their offsets may be committed now. */
    private void popFinished() {
        InFlight head;
        boolean popped = false;
        while ((head = inFlight.peekFirst()) != null && head.done().isDone() && !head.done().isCompletedExceptionally()) {
            inFlight.pollFirst();
            popped = true;
            inFlightRecords -= head.records();
            long tookMillis = (System.nanoTime() - head.startedNanos()) / 1_000_000;
            if (tookMillis >= SLOW_MILLIS) {
                slow.info("consumer of %s took %d ms for a batch of %d records", topic, tookMillis, head.records());
            }
            if (head == reportedWaiting) {
                reportedWaiting = null;
            }
            head.offsets().forEach((tp, range) -> {
                long next = range[1];
                uncommitted.processed(tp, next);
                replayEnds.computeIfPresent(tp.partition(), (k, end) -> next >= end ? null : end);
            });
            retryBackoff = 100;
        }
        if (popped) {
            measureStall();
        }
    }

    /**
     * Gives up the batches in flight (newest first, so no later one acts on an earlier one's
     * cancellation) and seeks back to the oldest: their records are read again, as possible replays.
     */
    private void abandon(Consumer<byte[], byte[]> c, String why, boolean pause) {
        abandon(c, why, pause, List.of());
    }

    /** The same while {@code leaving} are being revoked (still in the assignment): they are not read again here. */
    private void abandon(Consumer<byte[], byte[]> c, String why, boolean pause, Collection<TopicPartition> leaving) {
        Map<TopicPartition, long[]> span = new HashMap<>();
        int records = inFlightRecords;
        Map<TopicPartition, Long> waiting = new HashMap<>();
        soughtBack.forEach((tp, back) -> waiting.put(tp, back.waitingSince()));
        for (Iterator<InFlight> it = inFlight.descendingIterator(); it.hasNext();) {
            InFlight b = it.next();
            b.done().cancel(false);
            b.offsets().forEach((tp, range) -> {
                span.merge(tp, range.clone(), (a, o) -> new long[] {Math.min(a[0], o[0]), Math.max(a[1], o[1])});
                waiting.merge(tp, b.waitingSince(), (x, y) -> x - y < 0 ? x : y);
            });
        }
        inFlight.clear();
        inFlightRecords = 0;
        reportedWaiting = null;
        Collection<TopicPartition> assigned = new HashSet<>(c.assignment());
        assigned.removeAll(leaving);
        span.forEach((tp, range) -> {
            if (assigned.contains(tp)) {
                c.seek(tp, range[0]);
                replayEnds.merge(tp.partition(), range[1], Math::max);
                SoughtBack before = soughtBack.get(tp);
                long end = before != null ? Math.max(before.end(), range[1]) : range[1];
                soughtBack.put(tp, new SoughtBack(waiting.get(tp), end));
            }
        });
        // What is not read again here is another member's now.
        measureStall();
        RETRIES.info("%d records from %s not processed (%s); reading them again from %s", records, topic, why,
                span.entrySet().stream().map(e -> e.getKey().partition() + "@" + e.getValue()[0]).sorted().toList());
        if (pause) {
            sleep(retryBackoff);
            // Short: a Redis master restarting or a slot moving is over in seconds.
            retryBackoff = Math.min(retryBackoff * 2, 1_000);
        }
    }

    private void cancelInFlight() {
        for (Iterator<InFlight> it = inFlight.descendingIterator(); it.hasNext();) {
            it.next().done().cancel(false);
        }
        inFlight.clear();
        inFlightRecords = 0;
    }

    /** The first offset of {@code tp} still in flight, or null when everything polled from it is done. */
    private Long firstInFlight(TopicPartition tp) {
        for (InFlight b : inFlight) {
            long[] range = b.offsets().get(tp);
            if (range != null) {
                return range[0];
            }
        }
        return null;
    }

    private static String causeOf(CompletableFuture<Void> failed) {
        try {
            failed.join();
            return "failed";
        } catch (CompletionException e) {
            return String.valueOf(e.getCause() != null ? e.getCause() : e);
        } catch (CancellationException e) {
            return "cancelled";
        }
    }

    /** The broker's own view of a polled batch, in the same order: the handlers see no Kafka client type. */
    private static List<LogRecord> batch(ConsumerRecords<byte[], byte[]> records) {
        List<LogRecord> batch = new ArrayList<>(records.count());
        for (ConsumerRecord<byte[], byte[]> r : records) {
            batch.add(new LogRecord(r.topic(), r.partition(), r.offset(), r.key(), r.value()));
        }
        return batch;
    }

    private void commitDue(Consumer<byte[], byte[]> c) {
        long now = System.nanoTime();
        if (uncommitted.isEmpty() || now - lastCommit < commitIntervalNanos) {
            return;
        }
        lastCommit = now;
        c.commitAsync(uncommitted.toCommit(), (offsets, error) -> {
            if (error == null) {
                uncommitted.committed(offsets);
            } else if (LOG.isDebugEnabled()) {
                // Kept: the next commit carries these offsets again.
                LOG.debugf("commit of %s refused for now (%s); retried with the next", topic, error.toString());
            }
        });
    }

    /**
     * A synchronous commit of where this consumer got to in {@code partitions}, marked as a
     * hand-over; retried while the group coordinator is completing another rebalance, and once
     * after a wakeup from {@link #stop()} (the wakeup is spent by then). Positions are exactly what
     * was processed here once nothing is in flight (a failed batch was sought back to its start); a
     * partition with a batch still unfinished is committed up to that batch and not marked, so its
     * next owner treats what follows as possible replays, and so is one this member has not yet
     * read up to the end of its predecessor's possible replays. A partition whose hand-over was
     * never looked up ({@link #unchecked}) was not read here: its commit stays as it was.
     */
    private void commitBeforeHandOver(Consumer<byte[], byte[]> c, Collection<TopicPartition> partitions, String why) {
        if (partitions.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        RuntimeException last = null;
        boolean wokenUp = false;
        for (int attempt = 0; attempt < HAND_OVER_ATTEMPTS; attempt++) {
            try {
                for (TopicPartition tp : partitions) {
                    if (unchecked.contains(tp)) {
                        OffsetAndMetadata before = beforeMarker(tp);
                        if (before != null) {
                            offsets.put(tp, before);
                        }
                        continue;
                    }
                    Long unfinished = firstInFlight(tp);
                    offsets.computeIfAbsent(tp, k -> unfinished != null ? new OffsetAndMetadata(unfinished) : handOver(c, k));
                }
                if (offsets.isEmpty()) {
                    return;
                }
                c.commitSync(offsets, COMMIT_TIMEOUT);
                uncommitted.committed(offsets);
                return;
            } catch (WakeupException e) {
                if (wokenUp) {
                    last = e;
                    break;
                }
                wokenUp = true;
            } catch (RebalanceInProgressException e) {
                last = e;
                sleep(100);
            } catch (RuntimeException e) {
                last = e;
                break;
            }
        }
        LOG.warnf("consumer of %s could not commit %s before %s (%s): the next owner processes records since the last commit again",
                topic, offsets.isEmpty() ? uncommitted.toCommit(partitions) : offsets, why, String.valueOf(last));
    }

    /**
     * For a partition not read here whose start marker may have been stored (its commit failed or
     * timed out, or a stop came meanwhile), a commit saying what was found before: a hand-over at
     * that place, or a plain commit where records may be replays. Null without a marker sent.
     */
    private OffsetAndMetadata beforeMarker(TopicPartition tp) {
        Marker sent = markersSent.get(tp);
        if (sent == null) {
            return null;
        }
        return new OffsetAndMetadata(sent.commit().offset(), sent.replayEnd() == null ? HANDED_OVER : "");
    }

    /** Where this member got to in {@code tp}, marked a hand-over unless records its predecessor may have processed lie ahead. */
    private OffsetAndMetadata handOver(Consumer<byte[], byte[]> c, TopicPartition tp) {
        long position = c.position(tp, COMMIT_TIMEOUT);
        Long replayEnd = replayEnds.get(tp.partition());
        return replayEnd != null && position < replayEnd ? new OffsetAndMetadata(position) : new OffsetAndMetadata(position, HANDED_OVER);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Why this consumer stopped on its own, or null. Its partitions are then read by nobody on this
     * node, so the node's liveness check fails on it (a restart gives them a consumer again).
     */
    public RuntimeException failure() {
        return failure;
    }

    public void stop() {
        running = false;
        Consumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }
}
