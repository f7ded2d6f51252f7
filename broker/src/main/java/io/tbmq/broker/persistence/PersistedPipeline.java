package io.tbmq.broker.persistence;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.jboss.logging.Logger;

import io.tbmq.broker.kafka.LogConsumer;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * tbmq.msg.persisted into Redis, then to the client: each polled batch is grouped per client (or
 * per slot group) so one script call stores all of a client's messages; the batch's offsets are
 * committed only after Redis acknowledged every write (the seeds' durability argument), and only
 * then are the messages handed to connected sessions, with the packet ids Redis assigned.
 */
public final class PersistedPipeline implements LogConsumer.BatchHandler {
    private static final Logger LOG = Logger.getLogger(PersistedPipeline.class);
    private static final RateLimitedLog BAD = new RateLimitedLog(LOG, 2);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final DeviceMessageStore store;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final long defaultTtlSeconds;

    public PersistedPipeline(DeviceMessageStore store, SessionRegistry sessions, BrokerMetrics metrics, long defaultTtlSeconds) {
        this.store = store;
        this.sessions = sessions;
        this.metrics = metrics;
        this.defaultTtlSeconds = defaultTtlSeconds;
    }

    @Override
    public CompletableFuture<Void> handle(ConsumerRecords<byte[], byte[]> records) {
        long now = System.currentTimeMillis();
        Map<String, List<DeviceMessageStore.Incoming>> byClient = new LinkedHashMap<>();
        Map<String, Session> targets = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            String clientId = new String(record.key(), StandardCharsets.UTF_8);
            PersistedRecord r;
            try {
                r = PersistedRecord.decode(record.value());
            } catch (IllegalArgumentException e) {
                BAD.info("skipping undecodable record %s-%d@%d", record.topic(), record.partition(), record.offset());
                continue;
            }
            Session session = sessions.get(clientId);
            if (session == null || session.epoch() != r.epoch()) {
                // Routed for a session that has ended or was replaced by a clean start.
                metrics.dropped("session-gone");
                continue;
            }
            if (r.expiresAtMillis() != 0 && now >= r.expiresAtMillis()) {
                metrics.dropped("expired");
                continue;
            }
            long ttl = r.expiresAtMillis() == 0 ? defaultTtlSeconds : Math.max(1, (r.expiresAtMillis() - now + 999) / 1000);
            byClient.computeIfAbsent(clientId, c -> new ArrayList<>())
                    .add(new DeviceMessageStore.Incoming(r.sourcePartition(), r.sourceOffset(), ttl, r.stored()));
            targets.put(clientId, session);
        }
        if (byClient.isEmpty()) {
            return DONE;
        }
        return store.add(byClient, sessions::isConnected).thenAccept(assigned -> deliver(byClient, targets, assigned));
    }

    private void deliver(Map<String, List<DeviceMessageStore.Incoming>> byClient, Map<String, Session> targets,
            Map<String, List<DeviceMessageStore.Assigned>> assigned) {
        for (Map.Entry<String, List<DeviceMessageStore.Incoming>> e : byClient.entrySet()) {
            Session session = targets.get(e.getKey());
            if (LOG.isDebugEnabled()) {
                LOG.debugf("stored %d for %s (connected %s): %s", e.getValue().size(), e.getKey(), session.isConnected(),
                        assigned.get(e.getKey()));
            }
            if (!session.isConnected()) {
                continue;
            }
            List<DeviceMessageStore.Assigned> ids = assigned.get(e.getKey());
            for (int i = 0; i < e.getValue().size(); i++) {
                DeviceMessageStore.Assigned a = ids.get(i);
                if (a.packetId() != 0) {
                    session.offer(StoredMessage.decode(e.getValue().get(i).value(), a.packetId(), a.score(), false));
                }
            }
        }
    }
}
