package io.tbmq.broker.persistence;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
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
import io.tbmq.broker.session.Handoffs;
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
 * <p>A write Redis refuses (a master failing over, a slot moving, a full master) is tried again
 * within the batch until it is stored, or its session ended meanwhile (then its messages are
 * dropped, as they would be if routed now), or its consumer gives the batch up (cancels its future
 * and reads it again). So the batch's other copies, already handed to in-memory sessions, are not
 * routed twice, however long Redis refuses. A client's messages are written in the order they were read: a batch's
 * write for a client waits for the client's write of any earlier batch still unfinished, since
 * Redis keeps a client's last applied offset per source partition and would refuse the earlier
 * messages as replays once later ones were stored. So the routing consumer may read on while a
 * batch waits for one master ({@code tbmq.kafka.msg-all-read-ahead}) without losing or reordering.
 */
public final class DeviceWrites {
    private static final Logger LOG = Logger.getLogger(DeviceWrites.class);
    /** A full master refuses for as long as it stays full: hours, perhaps. */
    private static final RateLimitedLog RETRYING = new RateLimitedLog(LOG, 1, java.time.Duration.ofMinutes(1));
    private static final RateLimitedLog FAULTS = new RateLimitedLog(LOG, 1, java.time.Duration.ofMinutes(1));
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    /** Copies stored straight from the routing consumer: no tbmq.msg.persisted partition in between. */
    public static final int ROUTED = -1;

    private final DeviceMessageStore store;
    private final SessionRegistry sessions;
    private final BrokerMetrics metrics;
    private final long defaultTtlSeconds;
    private final RemoteSessions remote;
    private final Downlinks downlinks;
    /** Per client, the unfinished write of its latest batch: a later batch's write for the client waits for it. */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> unfinished = new ConcurrentHashMap<>();
    /** Writes that waited for an earlier one, and retries: off the Redis I/O threads that complete the earlier writes. */
    private final Executor chained = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "tbmq-device-writes");
        t.setDaemon(true);
        return t;
    });

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
        /** Per client, where its session is: looked up again before a write that waited (it may have moved or ended). */
        private final Map<String, Target> targets = new ConcurrentHashMap<>();
        /** Per client, beside each message of {@link #byClient}, the copy it was encoded from (null when read as bytes). */
        private final Map<String, List<OutboundMessage>> copies = new HashMap<>();

        @Override
        public void add(String clientId, long epoch, OutboundMessage copy, int sourcePartition, long sourceOffset) {
            add(clientId, epoch, sourcePartition, ROUTED, sourceOffset, copy.message().expiresAtMillis(), StoredMessage.encode(copy), copy);
        }

        /**
         * A message for session {@code epoch} of {@code clientId}, read at {@code sourceOffset} of the
         * log's {@code sourcePartition}, through {@code viaPartition} of tbmq.msg.persisted or {@link #ROUTED}.
         */
        public void add(String clientId, long epoch, int sourcePartition, int viaPartition, long sourceOffset, long expiresAtMillis,
                byte[] value) {
            add(clientId, epoch, sourcePartition, viaPartition, sourceOffset, expiresAtMillis, value, null);
        }

        private void add(String clientId, long epoch, int sourcePartition, int viaPartition, long sourceOffset, long expiresAtMillis,
                byte[] value, OutboundMessage copy) {
            Target target = targets.get(clientId);
            if (target == null) {
                target = locate(clientId);
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
            copies.computeIfAbsent(clientId, c -> new ArrayList<>()).add(copy);
            targets.put(clientId, target);
        }

        /** Per client, done when its messages are stored and handed on. */
        private final Map<String, CompletableFuture<Void>> written = new HashMap<>();
        /** Delivery through other nodes' downlinks. */
        private final List<CompletableFuture<Void>> forwarded = Collections.synchronizedList(new ArrayList<>());
        /** Clients whose earlier write finished meanwhile, to be written in one go. */
        private final List<String> ready = new ArrayList<>();
        private final CompletableFuture<Void> done = new CompletableFuture<>();

        @Override
        public CompletableFuture<Void> store() {
            if (byClient.isEmpty()) {
                return DONE;
            }
            Map<String, List<DeviceMessageStore.Incoming>> now = new LinkedHashMap<>();
            Map<String, CompletableFuture<Void>> waiting = new LinkedHashMap<>();
            for (Map.Entry<String, List<DeviceMessageStore.Incoming>> e : byClient.entrySet()) {
                String client = e.getKey();
                CompletableFuture<Void> mine = new CompletableFuture<>();
                written.put(client, mine);
                CompletableFuture<Void> earlier = unfinished.put(client, mine);
                mine.whenComplete((v, x) -> unfinished.remove(client, mine));
                if (earlier == null || earlier.isDone()) {
                    now.put(client, e.getValue());
                } else {
                    waiting.put(client, earlier);
                }
            }
            CompletableFuture.allOf(written.values().toArray(CompletableFuture[]::new))
                    .thenCompose(v -> CompletableFuture.allOf(forwarded.toArray(CompletableFuture[]::new)))
                    .whenComplete((v, error) -> complete(done, error));
            done.whenComplete((v, error) -> {
                if (done.isCancelled()) {
                    // Given up by the consumer, with every batch after it: whatever waits for these clients goes on; the batch is read again.
                    written.values().forEach(w -> w.cancel(false));
                }
            });
            waiting.forEach((client, earlier) -> earlier.whenComplete((v, x) -> ready(client)));
            if (!now.isEmpty()) {
                try {
                    attempt(now, 100);
                } catch (RuntimeException e) {
                    later(now, 100, e);
                }
            }
            return done;
        }

        /** {@code client}'s earlier write finished: its messages here go with the next call. */
        private void ready(String client) {
            boolean first;
            synchronized (ready) {
                first = ready.isEmpty();
                ready.add(client);
            }
            if (first) {
                // Off the thread completing the earlier write, so that the clients it frees go in one call.
                chained.execute(this::writeReady);
            }
        }

        private void writeReady() {
            Map<String, List<DeviceMessageStore.Incoming>> go = new LinkedHashMap<>();
            synchronized (ready) {
                ready.forEach(c -> go.put(c, byClient.get(c)));
                ready.clear();
            }
            retry(go, 100);
        }

        /**
         * Writes what {@code waiting} holds for the clients still wanted. Should that throw (a fault,
         * not a refusal), it is tried again later all the same: only the consumer gives a batch up,
         * with every batch after it, so a client's later writes never overtake its earlier ones.
         */
        private void retry(Map<String, List<DeviceMessageStore.Incoming>> waiting, long backoff) {
            if (done.isDone()) {
                return;
            }
            Map<String, List<DeviceMessageStore.Incoming>> wanted = waiting;
            try {
                wanted = stillWanted(waiting);
                attempt(wanted, backoff);
            } catch (RuntimeException e) {
                later(wanted, backoff, e);
            }
        }

        /** After a fault (a bug, not a refusal): said with its stack trace, and tried again. */
        private void later(Map<String, List<DeviceMessageStore.Incoming>> waiting, long backoff, RuntimeException e) {
            FAULTS.warn(e, "storing the messages for %d clients in Redis failed (%s); trying again", waiting.size(), e);
            CompletableFuture.delayedExecutor(backoff, TimeUnit.MILLISECONDS, chained)
                    .execute(() -> retry(waiting, Math.min(backoff * 2, 1_000)));
        }

        /**
         * The clients of {@code waited} whose session is still the one the batch was for, now
         * located where it is; the others' messages are dropped: their session ended while Redis
         * refused (perhaps cleared to make room in a full master), or a clean start replaced it.
         */
        private Map<String, List<DeviceMessageStore.Incoming>> stillWanted(Map<String, List<DeviceMessageStore.Incoming>> waited) {
            Map<String, List<DeviceMessageStore.Incoming>> wanted = new LinkedHashMap<>();
            for (Map.Entry<String, List<DeviceMessageStore.Incoming>> e : waited.entrySet()) {
                String client = e.getKey();
                if (written.get(client).isDone()) {
                    continue; // dropped or stored by an attempt before a fault
                }
                Target now = locate(client);
                if (now == null || now.epoch() != targets.get(client).epoch()) {
                    e.getValue().forEach(m -> metrics.dropped("session-gone"));
                    if (LOG.isDebugEnabled()) {
                        LOG.debugf("%d messages for %s dropped before they were stored: session %s", e.getValue().size(),
                                LogText.of(client), now);
                    }
                    written.get(client).complete(null);
                    continue;
                }
                targets.put(client, now);
                wanted.put(client, e.getValue());
            }
            return wanted;
        }

        /** Stores {@code remaining}; each call's clients are served as soon as their messages are stored. */
        private void attempt(Map<String, List<DeviceMessageStore.Incoming>> remaining, long backoff) {
            if (remaining.isEmpty()) {
                return;
            }
            Map<String, Boolean> stored = new ConcurrentHashMap<>();
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            for (CompletableFuture<Map<String, List<DeviceMessageStore.Assigned>>> call
                    : store.addEach(remaining, c -> targets.get(c).connected())) {
                calls.add(call.thenAccept(assigned -> {
                    assigned.keySet().forEach(c -> stored.put(c, Boolean.TRUE));
                    CompletableFuture<Void> handedOn;
                    try {
                        handedOn = deliver(assigned);
                    } catch (RuntimeException e) {
                        // Stored, so not written again: the batch fails and is read again, as a replay.
                        handedOn = CompletableFuture.failedFuture(e);
                    }
                    forwarded.add(handedOn);
                    assigned.keySet().forEach(c -> written.get(c).complete(null));
                }));
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> {
                if (done.isDone()) {
                    return;
                }
                // A call may also leave clients out without failing (see DeviceMessageStore.addEach).
                Map<String, List<DeviceMessageStore.Incoming>> left = new LinkedHashMap<>(remaining);
                left.keySet().removeAll(stored.keySet());
                if (left.isEmpty()) {
                    return;
                }
                try {
                    RETRYING.info("storing the messages for %s in Redis failed (%s); trying again",
                            left.size() == 1 ? "1 client" : left.size() + " clients",
                            error == null ? "left out of their calls" : (error.getCause() != null ? error.getCause() : error).toString());
                } finally {
                    CompletableFuture.delayedExecutor(backoff, TimeUnit.MILLISECONDS, chained)
                            .execute(() -> retry(left, Math.min(backoff * 2, 1_000)));
                }
            });
        }

        /** Hands a call's stored messages to their sessions, the drains to each event loop in one task. */
        private CompletableFuture<Void> deliver(Map<String, List<DeviceMessageStore.Assigned>> assigned) {
            return Handoffs.batch(() -> offer(assigned));
        }

        private CompletableFuture<Void> offer(Map<String, List<DeviceMessageStore.Assigned>> assigned) {
            List<CompletableFuture<Void>> sends = null;
            for (Map.Entry<String, List<DeviceMessageStore.Assigned>> stored : assigned.entrySet()) {
                String clientId = stored.getKey();
                List<DeviceMessageStore.Incoming> messages = byClient.get(clientId);
                List<OutboundMessage> routed = copies.get(clientId);
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
                        target.session().offer(stored(routed.get(i), value, a));
                    } else {
                        SessionState s = target.elsewhere();
                        if (sends == null) {
                            sends = new ArrayList<>();
                        }
                        sends.add(downlinks.send(s.node(), s.clientId(), new DownlinkRecord(s.epoch(), 0, a.packetId(), a.score(), value)));
                    }
                }
            }
            return sends == null ? DONE : CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new));
        }
    }

    /** Where {@code clientId}'s session is: here, on another node, or nowhere (null). */
    private Target locate(String clientId) {
        Session session = sessions.get(clientId);
        if (session != null) {
            return new Target(session, null);
        }
        SessionState elsewhere = remote.find(clientId);
        if (elsewhere != null) {
            return new Target(null, elsewhere);
        }
        // A session moving here is held here before its record elsewhere goes: looked up once more.
        session = sessions.get(clientId);
        return session != null ? new Target(session, null) : null;
    }

    /** The message as stored, with the packet id and score Redis assigned; decoded only when it was read as bytes. */
    private static OutboundMessage stored(OutboundMessage copy, byte[] value, DeviceMessageStore.Assigned a) {
        if (copy == null) {
            return StoredMessage.decode(value, a.packetId(), a.score(), false);
        }
        return new OutboundMessage(copy.message(), copy.qos(), copy.retain(), copy.subscriptionIds(), a.packetId(), a.score(), copy.dup());
    }

    /** Clients with a write in progress or waiting (for tests). */
    int unfinishedClients() {
        return unfinished.size();
    }

    private static void complete(CompletableFuture<Void> done, Throwable error) {
        if (error == null) {
            done.complete(null);
        } else {
            done.completeExceptionally(error);
        }
    }
}
