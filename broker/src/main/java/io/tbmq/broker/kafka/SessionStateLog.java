package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.session.SessionState;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Persistent sessions in the compacted topic tbmq.client.session (key = client id, latest state
 * wins, an empty value ends the session). Read back whole at start, by every partition assigned
 * directly rather than through a consumer group, so the topic may have any number of partitions
 * (the reference's state topics break with more than one).
 */
public final class SessionStateLog implements SessionJournal {
    private static final Logger LOG = Logger.getLogger(SessionStateLog.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);

    private final KafkaSender sender;
    private final KafkaClients clients;
    private final String topic;

    public SessionStateLog(KafkaSender sender, KafkaClients clients, KafkaTopics topics) {
        this.sender = sender;
        this.clients = clients;
        this.topic = topics.clientSessions();
    }

    @Override
    public void saved(Session session, long disconnectedAtMillis) {
        if (session.expiryIntervalSeconds() == 0) {
            ended(session.clientId());
            return;
        }
        sender.send(topic, key(session.clientId()), session.state(disconnectedAtMillis).encode()).whenComplete((v, e) -> {
            if (e != null) {
                FAILED.info("session state of %s not saved: %s", session.clientId(), e.getMessage());
            }
        });
    }

    @Override
    public void ended(String clientId) {
        sender.send(topic, key(clientId), null);
    }

    private static byte[] key(String clientId) {
        return clientId.getBytes(StandardCharsets.UTF_8);
    }

    /** Every live session in the topic, read from the beginning to the end as of now. */
    public List<SessionState> readAll(Duration timeout) {
        Properties p = clients.common("session-restore");
        p.put("key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        Map<String, SessionState> latest = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : c.partitionsFor(topic, timeout)) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            c.assign(partitions);
            c.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = c.endOffsets(partitions, timeout);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!caughtUp(c, end)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("reading " + topic + " took longer than " + timeout);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    String clientId = new String(r.key(), StandardCharsets.UTF_8);
                    if (r.value() == null || r.value().length == 0) {
                        latest.remove(clientId);
                    } else {
                        try {
                            latest.put(clientId, SessionState.decode(clientId, r.value()));
                        } catch (IllegalArgumentException e) {
                            FAILED.info("unreadable session state of %s skipped", clientId);
                        }
                    }
                }
            }
        }
        return new ArrayList<>(latest.values());
    }

    private static boolean caughtUp(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
