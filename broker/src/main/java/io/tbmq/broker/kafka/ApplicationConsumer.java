package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jboss.logging.Logger;

import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.StoredMessage;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.util.LogText;

/**
 * Feeds one connected persistent APPLICATION client from its topic. Reading starts at the offset
 * the client last acknowledged (the consumer group's commit), so an offline backlog survives
 * reconnects and restarts; the commit moves only over acknowledged messages (PUBACK, PUBCOMP; QoS
 * 0 on hand-over). The commit metadata records the highest offset handed out, so re-sent messages
 * carry DUP. Reading pauses while the session has many messages queued.
 */
final class ApplicationConsumer implements Runnable {
    private static final Logger LOG = Logger.getLogger(ApplicationConsumer.class);
    private static final String SENT = "sent=";

    private final Properties properties;
    private final TopicPartition partition;
    private final Session session;
    private final Object connection;
    private final int maxQueued;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private final ConcurrentLinkedQueue<Long> acks = new ConcurrentLinkedQueue<>();
    private AcknowledgedOffsets offsets;
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private long highestSent = -1;
    private long committedSent = -1;
    private long lastCommitted = -1;

    ApplicationConsumer(Properties properties, String topic, Session session, Object connection, int maxQueued) {
        this.properties = new Properties();
        this.properties.putAll(properties);
        this.properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        this.properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // Assigned, not subscribed: the group only keeps the committed offset, no membership.
        this.properties.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        this.partition = new TopicPartition(topic, 0);
        this.session = session;
        this.connection = connection;
        this.maxQueued = maxQueued;
    }

    /** The connection this consumer feeds. */
    Object connection() {
        return connection;
    }

    /** The client acknowledged the message at {@code offset}; any thread. */
    void acknowledged(long offset) {
        acks.add(offset);
    }

    @Override
    public void run() {
        KafkaConsumer<byte[], byte[]> c;
        try {
            c = new KafkaConsumer<>(properties);
        } catch (RuntimeException e) {
            LOG.warnf("application consumer of %s could not start: %s", LogText.of(session.clientId()), e.getMessage());
            stopped.complete(null);
            return;
        }
        consumer = c;
        try {
            c.assign(List.of(partition));
            OffsetAndMetadata committed = c.committed(java.util.Set.of(partition)).get(partition);
            long start;
            if (committed != null) {
                c.seek(partition, committed.offset());
                start = committed.offset();
                String meta = committed.metadata();
                if (meta != null && meta.startsWith(SENT)) {
                    committedSent = Long.parseLong(meta.substring(SENT.length()));
                }
            } else {
                c.seekToBeginning(List.of(partition));
                start = c.position(partition);
            }
            offsets = new AcknowledgedOffsets(start);
            lastCommitted = start;
            highestSent = Math.max(highestSent, committedSent);
            while (running && session.isConnected()) {
                boolean full = session.queuedCount() >= maxQueued;
                if (full) {
                    c.pause(List.of(partition));
                } else {
                    c.resume(List.of(partition));
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    OutboundMessage m = StoredMessage.decode(r.value(), 0, r.offset() + 1, r.offset() <= committedSent);
                    highestSent = Math.max(highestSent, r.offset());
                    offsets.read(r.offset(), m.qos() > 0);
                    session.offer(m);
                }
                commit(c);
            }
        } catch (WakeupException e) {
            if (running) {
                LOG.warnf("application consumer of %s stopped unexpectedly", LogText.of(session.clientId()));
            }
        } catch (RuntimeException e) {
            LOG.warnf("application consumer of %s failed: %s", LogText.of(session.clientId()), e.getMessage());
        } finally {
            // The last acknowledgements still count: commit before closing, wakeup or not.
            finalCommit(c);
            c.close();
            stopped.complete(null);
        }
    }

    private void finalCommit(KafkaConsumer<byte[], byte[]> c) {
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                commit(c);
                return;
            } catch (WakeupException e) {
                // A wakeup from stop() that no poll consumed yet: it is spent now, try again.
            } catch (RuntimeException e) {
                LOG.warnf("final commit for %s failed: %s", LogText.of(session.clientId()), e.toString());
                return;
            }
        }
    }

    private void commit(KafkaConsumer<byte[], byte[]> c) {
        if (offsets == null) {
            return; // failed before it knew where to start: nothing read, nothing to commit
        }
        Long offset;
        while ((offset = acks.poll()) != null) {
            offsets.acknowledged(offset);
        }
        long nextToCommit = offsets.commitOffset();
        if (nextToCommit != lastCommitted || highestSent != committedSent) {
            try {
                c.commitSync(Map.of(partition, new OffsetAndMetadata(nextToCommit, SENT + highestSent)));
                lastCommitted = nextToCommit;
                committedSent = highestSent;
            } catch (WakeupException e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.warnf("commit for %s failed: %s", LogText.of(session.clientId()), e.toString());
            }
        }
    }

    /** Asks the consumer to stop; the future completes once it committed and closed. */
    CompletableFuture<Void> stop() {
        running = false;
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        return stopped;
    }
}
