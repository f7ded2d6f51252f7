package io.tbmq.broker.persistence;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.tbmq.broker.cluster.Downlinks;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.record.DownlinkRecord;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.StoredMessage;
import io.tbmq.broker.routing.DeviceCopies;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Writes DEVICE sessions' messages into Redis a batch at a time, then hands them to their sessions
 * with the packet ids Redis assigned: here, or through the downlink topic of the node the client is
 * connected to. A batch's future completes only when Redis acknowledged every write, so the
 * offsets it was read at are committed only then (the TBMQ paper's durability argument).
 *
 * <p>A write Redis refuses (a master failing over, a slot moving) is tried again within the batch
 * for a while, so the batch's other copies, already handed to in-memory sessions, are not routed
 * twice; only after {@link #RETRY_BUDGET_MILLIS} does the batch fail and its consumer read it again.
 */
public final class DeviceWrites {
    private static final Logger LOG = Logger.getLogger(DeviceWrites.class);
    private static final RateLimitedLog RETRYING = new RateLimitedLog(LOG, 1);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    /** Copies stored straight from the routing consumer: no tbmq.msg.persisted partition in between. */
    public static final int ROUTED = -1;
    /** How long a batch keeps trying writes Redis refused; under the consumers' 30 s handler timeout. */
    static final long RETRY_BUDGET_MILLIS = 20_000;

    private final DeviceMessageStore store;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final long defaultTtlSeconds;
    private final RemoteSessions remote;
    private final Downlinks downlinks;

    /** A client a batch stores messages for: held here ({@code session}) or by another node ({@code elsewhere}). */
    private record Target(Session session, SessionState elsewhere) {
        boolean connected() {
            return session != null ? session.isConnected() : elsewhere.connected();
        }

        long epoch() {
            return session != null ? session.epoch() : elsewhere.epoch();
        }
    }

    public DeviceWrites(DeviceMessageStore store, SessionRegistry sessions, BrokerMetrics metrics, long defaultTtlSeconds,
            RemoteSessions remote, Downlinks downlinks) {
        this.store = store;
        this.sessions = sessions;
        this.metrics = metrics;
        this.defaultTtlSeconds = defaultTtlSeconds;
        this.remote = remote;
        this.downlinks = downlinks;
    }

    /** An empty batch; one per polled batch of a consumer, filled and stored on its thread. */
    public Batch batch() {
        return new Batch();
    }

    /** The messages of one polled batch, grouped per client so one script call stores all of a client's messages. */
    public final class Batch implements DeviceCopies {
        private final long now = System.currentTimeMillis();
        private final Map<String, List<DeviceMessageStore.Incoming>> byClient = new LinkedHashMap<>();
        private final Map<String, Target> targets = new LinkedHashMap<>();

        @Override
        public void add(String clientId, long epoch, OutboundMessage copy, int sourcePartition, long sourceOffset) {
            add(clientId, epoch, sourcePartition, ROUTED, sourceOffset, copy.message().expiresAtMillis(), StoredMessage.encode(copy));
        }

        /**
         * A message for session {@code epoch} of {@code clientId}, read at {@code sourceOffset} of the
         * log's {@code sourcePartition}, through {@code viaPartition} of tbmq.msg.persisted or {@link #ROUTED}.
         */
        public void add(String clientId, long epoch, int sourcePartition, int viaPartition, long sourceOffset, long expiresAtMillis,
                byte[] value) {
            Target target = targets.get(clientId);
            if (target == null) {
                Session session = sessions.get(clientId);
                SessionState elsewhere = session == null ? remote.find(clientId) : null;
                target = session != null ? new Target(session, null) : elsewhere != null ? new Target(null, elsewhere) : null;
            }
            if (target == null || target.epoch() != epoch) {
                // Routed for a session that has ended or was replaced by a clean start.
                metrics.dropped("session-gone");
                if (LOG.isDebugEnabled()) {
                    LOG.debugf("message for %s (epoch %d) dropped: session %s", LogText.of(clientId), epoch, target);
                }
                return;
            }
            if (expiresAtMillis != 0 && now >= expiresAtMillis) {
                metrics.dropped("expired");
                return;
            }
            long ttl = expiresAtMillis == 0 ? defaultTtlSeconds : Math.max(1, (expiresAtMillis - now + 999) / 1000);
            byClient.computeIfAbsent(clientId, c -> new ArrayList<>())
                    .add(new DeviceMessageStore.Incoming(sourcePartition, viaPartition, sourceOffset, ttl, value));
            targets.put(clientId, target);
        }

        @Override
        public CompletableFuture<Void> store() {
            if (byClient.isEmpty()) {
                return DONE;
            }
            CompletableFuture<Void> done = new CompletableFuture<>();
            attempt(byClient, done, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_BUDGET_MILLIS), 100);
            return done;
        }

        /** Stores {@code remaining}; each call's clients are served as soon as their messages are stored. */
        private void attempt(Map<String, List<DeviceMessageStore.Incoming>> remaining, CompletableFuture<Void> done, long deadline,
                long backoff) {
            Map<String, Boolean> stored = new ConcurrentHashMap<>();
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            List<CompletableFuture<Void>> forwarded = java.util.Collections.synchronizedList(new ArrayList<>());
            for (CompletableFuture<Map<String, List<DeviceMessageStore.Assigned>>> call
                    : store.addEach(remaining, c -> targets.get(c).connected())) {
                calls.add(call.thenAccept(assigned -> {
                    assigned.keySet().forEach(c -> stored.put(c, Boolean.TRUE));
                    forwarded.add(deliver(assigned));
                }));
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> {
                CompletableFuture<Void> handedOn = CompletableFuture.allOf(forwarded.toArray(CompletableFuture[]::new));
                if (error == null) {
                    handedOn.whenComplete((w, e) -> complete(done, e));
                    return;
                }
                Map<String, List<DeviceMessageStore.Incoming>> left = new LinkedHashMap<>(remaining);
                left.keySet().removeAll(stored.keySet());
                if (System.nanoTime() - deadline >= 0) {
                    handedOn.whenComplete((w, e) -> done.completeExceptionally(error));
                    return;
                }
                RETRYING.info("storing the messages of %d clients in Redis failed (%s); trying again", left.size(),
                        (error.getCause() != null ? error.getCause() : error).toString());
                CompletableFuture<Void> retried = new CompletableFuture<>();
                CompletableFuture.delayedExecutor(backoff, TimeUnit.MILLISECONDS)
                        .execute(() -> attempt(left, retried, deadline, Math.min(backoff * 2, 1_000)));
                CompletableFuture.allOf(handedOn, retried).whenComplete((w, e) -> complete(done, e));
            });
        }

        private CompletableFuture<Void> deliver(Map<String, List<DeviceMessageStore.Assigned>> assigned) {
            List<CompletableFuture<Void>> forwarded = null;
            for (Map.Entry<String, List<DeviceMessageStore.Assigned>> stored : assigned.entrySet()) {
                String clientId = stored.getKey();
                List<DeviceMessageStore.Incoming> messages = byClient.get(clientId);
                Target target = targets.get(clientId);
                if (LOG.isDebugEnabled()) {
                    LOG.debugf("stored %d for %s (connected %s): %s", messages.size(), clientId, target.connected(), stored.getValue());
                }
                if (!target.connected()) {
                    continue;
                }
                List<DeviceMessageStore.Assigned> ids = stored.getValue();
                for (int i = 0; i < messages.size(); i++) {
                    DeviceMessageStore.Assigned a = ids.get(i);
                    if (a.packetId() == 0) {
                        continue;
                    }
                    byte[] value = messages.get(i).value();
                    if (target.session() != null) {
                        target.session().offer(StoredMessage.decode(value, a.packetId(), a.score(), false));
                    } else {
                        SessionState s = target.elsewhere();
                        if (forwarded == null) {
                            forwarded = new ArrayList<>();
                        }
                        forwarded.add(downlinks.send(s.node(), s.clientId(), new DownlinkRecord(s.epoch(), 0, a.packetId(), a.score(), value)));
                    }
                }
            }
            return forwarded == null ? DONE : CompletableFuture.allOf(forwarded.toArray(CompletableFuture[]::new));
        }
    }

    private static void complete(CompletableFuture<Void> done, Throwable error) {
        if (error == null) {
            done.complete(null);
        } else {
            done.completeExceptionally(error);
        }
    }
}
