package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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

import io.tbmq.broker.util.RateLimitedLog;

/**
 * One consumer thread of a broker topic with at-least-once processing: each polled batch is
 * handed over whole; its offsets are committed (at most every commit interval) only when the
 * handler's future completes; if it fails, the consumer seeks back to the batch and tries again
 * after a pause, so nothing that was acknowledged upstream is skipped (commit only after the
 * store acknowledged, as in the TBMQ paper).
 *
 * <p>A clean hand-over replays nothing: offsets stay owed until a commit covering them succeeds
 * (an asynchronous commit refused mid-rebalance is retried, not dropped), a partition is committed
 * synchronously before it is given up, and a consumer that stops on purpose commits before it
 * leaves the group. Only a crash, or a member the group expelled, leaves its successor to replay
 * up to one commit interval.
 */
public final class LogConsumer implements Runnable {
    private static final Logger LOG = Logger.getLogger(LogConsumer.class);
    private static final RateLimitedLog RETRIES = new RateLimitedLog(LOG, 1);
    /** A group completing another rebalance refuses commits for a moment; a revocation waits this long at most. */
    private static final int HAND_OVER_ATTEMPTS = 30;
    private static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(5);

    /** Processes one batch; the future completes when what must be durable is durable. */
    public interface BatchHandler {
        CompletableFuture<Void> handle(ConsumerRecords<byte[], byte[]> records);
    }

    private final Supplier<Consumer<byte[], byte[]>> factory;
    private final String topic;
    private final BatchHandler handler;
    private final Duration handlerTimeout;
    private final long commitIntervalNanos;
    private long lastCommit = System.nanoTime();
    private final UncommittedOffsets uncommitted = new UncommittedOffsets();
    private volatile boolean running = true;
    private volatile Consumer<byte[], byte[]> consumer;

    public LogConsumer(Properties properties, String topic, BatchHandler handler, Duration handlerTimeout,
            Duration commitInterval) {
        this(() -> new KafkaConsumer<>(withoutAutoCommit(properties)), topic, handler, handlerTimeout, commitInterval);
    }

    /** With the consumer {@code factory} makes (a test's mock, say); it must not commit on its own. */
    LogConsumer(Supplier<Consumer<byte[], byte[]>> factory, String topic, BatchHandler handler, Duration handlerTimeout,
            Duration commitInterval) {
        this.factory = factory;
        this.topic = topic;
        this.handler = handler;
        this.handlerTimeout = handlerTimeout;
        this.commitIntervalNanos = commitInterval.toNanos();
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
        try {
            consumer = c;
            c.subscribe(List.of(topic), new HandOver(c));
            long backoff = 100;
            while (running) {
                ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    commitDue(c);
                    continue;
                }
                if (process(records)) {
                    for (TopicPartition tp : records.partitions()) {
                        List<ConsumerRecord<byte[], byte[]>> list = records.records(tp);
                        uncommitted.processed(tp, list.get(list.size() - 1).offset() + 1);
                    }
                    commitDue(c);
                    backoff = 100;
                } else {
                    for (TopicPartition tp : records.partitions()) {
                        c.seek(tp, records.records(tp).get(0).offset());
                    }
                    sleep(backoff);
                    backoff = Math.min(backoff * 2, 5_000);
                }
            }
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "consumer of %s stopped", topic);
            throw e;
        } finally {
            // Before leaving the group: its successor starts where this consumer got to.
            commitBeforeHandOver(c, uncommitted.toCommit(), "leaving the group");
            // A node that stops on purpose leaves the group at once, so its partitions move now;
            // otherwise static membership would keep them unassigned until the session timeout.
            c.close(CloseOptions.groupMembershipOperation(running ? CloseOptions.GroupMembershipOperation.DEFAULT
                    : CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(5)));
        }
    }

    /** Commits before partitions move on, and forgets what is no longer this consumer's. */
    private final class HandOver implements ConsumerRebalanceListener {
        private final Consumer<byte[], byte[]> c;

        HandOver(Consumer<byte[], byte[]> c) {
            this.c = c;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            commitBeforeHandOver(c, uncommitted.toCommit(partitions), "giving up " + partitions);
            uncommitted.forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
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
            uncommitted.forget(partitions);
        }
    }

    private boolean process(ConsumerRecords<byte[], byte[]> records) {
        try {
            handler.handle(records).get(handlerTimeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            RETRIES.info("batch of %d records from %s not processed (%s); retrying", records.count(), topic, cause.toString());
            return false;
        }
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
     * A synchronous commit of {@code offsets}, retried while the group coordinator is completing
     * another rebalance, and once after a wakeup from {@link #stop()} (the wakeup is spent by then).
     */
    private void commitBeforeHandOver(Consumer<byte[], byte[]> c, Map<TopicPartition, OffsetAndMetadata> offsets, String why) {
        if (offsets.isEmpty()) {
            return;
        }
        RuntimeException last = null;
        boolean wokenUp = false;
        for (int attempt = 0; attempt < HAND_OVER_ATTEMPTS; attempt++) {
            try {
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
        LOG.warnf("consumer of %s could not commit %s before %s (%s): the next owner processes those records again", topic,
                offsets, why, String.valueOf(last));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public void stop() {
        running = false;
        Consumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }
}
