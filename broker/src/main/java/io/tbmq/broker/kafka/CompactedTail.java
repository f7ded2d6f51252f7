package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jboss.logging.Logger;
import io.tbmq.broker.log.TailHandler;

/**
 * Reads a compacted state topic from its beginning and keeps following it, every partition
 * assigned directly (no consumer group), so every node sees every record and the topic may have
 * any number of partitions (the reference's state topics break with more than one). The handler
 * learns when the records that existed at start have all been read: that is when a node's view
 * of the cluster is complete enough to accept clients.
 */
public final class CompactedTail implements Runnable, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(CompactedTail.class);

    private final Properties properties;
    private final String topic;
    private final TailHandler handler;
    private final CountDownLatch caughtUp = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile RuntimeException failure;

    public CompactedTail(KafkaClients clients, String name, String topic, TailHandler handler) {
        this.properties = clients.common(name);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        this.topic = topic;
        this.handler = handler;
        this.thread = new Thread(this, "tbmq-" + name);
        thread.setDaemon(true);
    }

    public CompactedTail start() {
        thread.start();
        return this;
    }

    /** Blocks until the records present at start are read; throws if that does not happen in time. */
    public void awaitCaughtUp(Duration timeout) {
        try {
            if (!caughtUp.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("reading " + topic + " took longer than " + timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + topic, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void run() {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(properties)) {
            consumer = c;
            List<TopicPartition> partitions = partitions(c);
            c.assign(partitions);
            c.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = c.endOffsets(partitions, Duration.ofMinutes(5));
            boolean behind = true;
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    byte[] value = r.value() == null || r.value().length == 0 ? null : r.value();
                    try {
                        handler.record(r.key(), value);
                    } catch (RuntimeException e) {
                        LOG.warnf(e, "record %s-%d@%d of %s not applied", r.topic(), r.partition(), r.offset(), topic);
                    }
                }
                if (behind && caughtUp(c, end)) {
                    behind = false;
                    handler.caughtUp();
                    caughtUp.countDown();
                }
            }
        } catch (WakeupException e) {
            if (running) {
                failure = e;
            }
        } catch (RuntimeException e) {
            failure = e;
            LOG.errorf(e, "reading %s stopped", topic);
        } finally {
            caughtUp.countDown();
        }
    }

    /** The topic's partitions; a topic created a moment ago may not be in the metadata yet. */
    private List<TopicPartition> partitions(KafkaConsumer<byte[], byte[]> c) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (running) {
            List<TopicPartition> out = new ArrayList<>();
            for (PartitionInfo info : c.partitionsFor(topic, Duration.ofMinutes(1))) {
                out.add(new TopicPartition(topic, info.partition()));
            }
            if (!out.isEmpty()) {
                return out;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topic " + topic + " has no partitions");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new IllegalStateException("stopped before " + topic + " was found");
    }

    private static boolean caughtUp(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() {
        running = false;
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
