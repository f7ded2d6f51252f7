package io.tbmq.broker.persistence;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.jboss.logging.Logger;

import io.tbmq.broker.cluster.Downlinks;
import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.record.DownlinkRecord;
import io.tbmq.broker.record.PersistedRecord;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.StoredMessage;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * tbmq.msg.persisted into Redis, then to the client: each polled batch is grouped per client (or
 * per slot group) so one script call stores all of a client's messages; the batch's offsets are
 * committed only after Redis acknowledged every write (the TBMQ paper's durability argument), and only
 * then are the messages handed to connected sessions, with the packet ids Redis assigned: here, or
 * through the downlink topic of the node the client is connected to.
 */
public final class PersistedHandler implements BatchHandler {
    private static final Logger LOG = Logger.getLogger(PersistedHandler.class);
    private static final RateLimitedLog BAD = new RateLimitedLog(LOG, 2);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final DeviceMessageStore store;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final long defaultTtlSeconds;
    private final RemoteSessions remote;
    private final Downlinks downlinks;

    /** A client this batch stores messages for: held here ({@code session}) or by another node ({@code elsewhere}). */
    private record Target(Session session, SessionState elsewhere) {
        boolean connected() {
            return session != null ? session.isConnected() : elsewhere.connected();
        }
    }

    public PersistedHandler(DeviceMessageStore store, SessionRegistry sessions, BrokerMetrics metrics, long defaultTtlSeconds,
            RemoteSessions remote, Downlinks downlinks) {
        this.store = store;
        this.sessions = sessions;
        this.metrics = metrics;
        this.defaultTtlSeconds = defaultTtlSeconds;
        this.remote = remote;
        this.downlinks = downlinks;
    }

    @Override
    public CompletableFuture<Void> handle(List<LogRecord> records, Replays replays) {
        // Replays need no marking here: Redis recognises a source offset it applied already.
        long now = System.currentTimeMillis();
        Map<String, List<DeviceMessageStore.Incoming>> byClient = new LinkedHashMap<>();
        Map<String, Target> targets = new LinkedHashMap<>();
        for (LogRecord record : records) {
            String clientId = new String(record.key(), StandardCharsets.UTF_8);
            PersistedRecord r;
            try {
                r = PersistedRecord.decode(record.value());
            } catch (IllegalArgumentException e) {
                BAD.info("skipping undecodable record %s-%d@%d", record.topic(), record.partition(), record.offset());
                continue;
            }
            Target target = targets.get(clientId);
            if (target == null) {
                Session session = sessions.get(clientId);
                target = session != null ? new Target(session, null) : remote.find(clientId) != null
                        ? new Target(null, remote.find(clientId)) : null;
            }
            long epoch = target == null ? 0 : target.session() != null ? target.session().epoch() : target.elsewhere().epoch();
            if (target == null || epoch != r.epoch()) {
                // Routed for a session that has ended or was replaced by a clean start.
                metrics.dropped("session-gone");
                if (LOG.isDebugEnabled()) {
                    LOG.debugf("record for %s (epoch %d) dropped: session %s", LogText.of(clientId), r.epoch(), target);
                }
                continue;
            }
            if (r.expiresAtMillis() != 0 && now >= r.expiresAtMillis()) {
                metrics.dropped("expired");
                continue;
            }
            long ttl = r.expiresAtMillis() == 0 ? defaultTtlSeconds : Math.max(1, (r.expiresAtMillis() - now + 999) / 1000);
            byClient.computeIfAbsent(clientId, c -> new ArrayList<>())
                    .add(new DeviceMessageStore.Incoming(r.sourcePartition(), record.partition(), r.sourceOffset(), ttl, r.stored()));
            targets.put(clientId, target);
        }
        if (byClient.isEmpty()) {
            return DONE;
        }
        // Each call's clients are served as soon as their messages are stored; the batch (and its
        // commit) is done when every call is.
        List<CompletableFuture<Void>> delivered = new ArrayList<>();
        for (CompletableFuture<Map<String, List<DeviceMessageStore.Assigned>>> call : store.addEach(byClient, c -> targets.get(c).connected())) {
            delivered.add(call.thenCompose(assigned -> deliver(byClient, targets, assigned)));
        }
        return CompletableFuture.allOf(delivered.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> deliver(Map<String, List<DeviceMessageStore.Incoming>> byClient, Map<String, Target> targets,
            Map<String, List<DeviceMessageStore.Assigned>> assigned) {
        List<CompletableFuture<Void>> forwarded = null;
        for (Map.Entry<String, List<DeviceMessageStore.Assigned>> stored : assigned.entrySet()) {
            Map.Entry<String, List<DeviceMessageStore.Incoming>> e = Map.entry(stored.getKey(), byClient.get(stored.getKey()));
            Target target = targets.get(e.getKey());
            if (LOG.isDebugEnabled()) {
                LOG.debugf("stored %d for %s (connected %s): %s", e.getValue().size(), e.getKey(), target.connected(),
                        assigned.get(e.getKey()));
            }
            if (!target.connected()) {
                continue;
            }
            List<DeviceMessageStore.Assigned> ids = stored.getValue();
            for (int i = 0; i < e.getValue().size(); i++) {
                DeviceMessageStore.Assigned a = ids.get(i);
                if (a.packetId() == 0) {
                    continue;
                }
                byte[] value = e.getValue().get(i).value();
                if (target.session() != null) {
                    target.session().offer(StoredMessage.decode(value, a.packetId(), a.score(), false));
                } else {
                    SessionState s = target.elsewhere();
                    if (forwarded == null) {
                        forwarded = new ArrayList<>();
                    }
                    forwarded.add(downlinks.send(s.node(), s.clientId(),
                            new DownlinkRecord(s.epoch(), 0, a.packetId(), a.score(), value)));
                }
            }
        }
        return forwarded == null ? DONE : CompletableFuture.allOf(forwarded.toArray(CompletableFuture[]::new));
    }
}
