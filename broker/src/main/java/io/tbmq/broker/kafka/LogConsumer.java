package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jboss.logging.Logger;

import io.tbmq.broker.util.RateLimitedLog;

/**
 * One consumer thread of a broker topic with at-least-once processing: each polled batch is
 * handed over whole; its offsets are committed (at most every commit interval) only when the
 * handler's future completes; if it
 * fails, the consumer seeks back to the batch and tries again after a pause, so nothing that was
 * acknowledged upstream is skipped (the seeds' durability argument: commit after the store acked).
 */
public final class LogConsumer implements Runnable {
    private static final Logger LOG = Logger.getLogger(LogConsumer.class);
    private static final RateLimitedLog RETRIES = new RateLimitedLog(LOG, 1);

    /** Processes one batch; the future completes when what must be durable is durable. */
    public interface BatchHandler {
        CompletableFuture<Void> handle(ConsumerRecords<byte[], byte[]> records);
    }

    private final Properties properties;
    private final String topic;
    private final BatchHandler handler;
    private final Duration handlerTimeout;
    private final long commitIntervalNanos;
    private long lastCommit = System.nanoTime();
    private final Map<TopicPartition, OffsetAndMetadata> processed = new HashMap<>();
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], byte[]> consumer;

    public LogConsumer(Properties properties, String topic, BatchHandler handler, Duration handlerTimeout,
            Duration commitInterval) {
        this.properties = new Properties();
        this.properties.putAll(properties);
        this.properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        this.topic = topic;
        this.handler = handler;
        this.handlerTimeout = handlerTimeout;
        this.commitIntervalNanos = commitInterval.toNanos();
    }

    @Override
    public void run() {
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(properties);
        try {
            consumer = c;
            c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    commitProcessed(c, true);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                }
            });
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
                        processed.put(tp, new OffsetAndMetadata(list.get(list.size() - 1).offset() + 1));
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
            commitProcessed(c, true);
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "consumer of %s stopped", topic);
            throw e;
        } finally {
            // A node that stops on purpose leaves the group at once, so its partitions move now;
            // otherwise static membership would keep them unassigned until the session timeout.
            c.close(CloseOptions.groupMembershipOperation(running ? CloseOptions.GroupMembershipOperation.DEFAULT
                    : CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(5)));
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

    private void commitDue(KafkaConsumer<byte[], byte[]> c) {
        long now = System.nanoTime();
        if (now - lastCommit >= commitIntervalNanos) {
            lastCommit = now;
            commitProcessed(c, false);
        }
    }

    private void commitProcessed(KafkaConsumer<byte[], byte[]> c, boolean sync) {
        if (processed.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(processed);
        processed.clear();
        try {
            if (sync) {
                c.commitSync(offsets);
            } else {
                c.commitAsync(offsets, null);
            }
        } catch (RuntimeException e) {
            LOG.debugf("commit of %s failed: %s", topic, e.getMessage());
        }
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
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }
}
