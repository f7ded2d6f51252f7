package io.tbmq.broker.session;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;

import io.tbmq.broker.auth.Acl;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.topic.TopicFilter;

/**
 * The server side of an MQTT session (§4.1): subscriptions, messages queued or in flight to the
 * client, and QoS 2 packet ids received but not yet released. It outlives connections when its
 * expiry interval is above zero.
 *
 * <p>Concurrency: Kafka consumer threads {@link #offer} messages; everything else runs on the
 * event loop of the connection the session is attached to. The monitor guards the queues; only
 * the event loop writes to the socket, so the order of queued messages is the order on the wire.
 */
public final class Session {
    private final String clientId;
    private final long epoch;
    private final boolean queueQos0Offline;
    private final Map<String, SubscriptionEntry> subscriptions = new ConcurrentHashMap<>();
    /** The queue and the in-flight window (see {@link Outbox}). */
    private final Outbox outbox;
    private final Set<Integer> inboundQos2 = new HashSet<>();
    private final DropCounter drops;
    /** The connection messages are written to; null while offline or while its CONNECT is still finishing. */
    private volatile DeliverySink sink;
    /**
     * The connection that opened this session last, attached or still finishing its CONNECT
     * (loading the store, say). Only it may attach: a slower connection that was replaced or
     * closed meanwhile must not take the session back when its asynchronous steps complete.
     */
    private DeliverySink owner;
    private volatile Acl deliveryAcl;
    private volatile Persistence persistence = Persistence.MEMORY;
    private volatile boolean everDevice;
    /** Where its messages are kept beyond memory (see {@link SessionStore}). */
    private SessionStore store = InMemorySessionStore.INSTANCE;
    /** The store's order of the stored messages on their way to the queue. */
    private final StoredOrder storedOrder;
    /** Read back from the session log after a restart: what was sent before is only known to the store. */
    private volatile boolean restoredAfterRestart;
    private volatile long expiryIntervalSeconds;
    /** Orders this session's records in tbmq.client.session against other nodes' (see {@link SessionState}). */
    private volatile long version;
    /** The current connection's Will, WillCodec bytes, recorded so another node can publish it if this one dies. */
    private volatile byte[] will;
    private ScheduledFuture<?> expiryTimer;
    private boolean ended;

    public Session(String clientId, long expiryIntervalSeconds, int maxQueued, boolean queueQos0Offline, DropCounter drops) {
        this(clientId, java.util.concurrent.ThreadLocalRandom.current().nextLong(), expiryIntervalSeconds, maxQueued,
                queueQos0Offline, drops);
    }

    /** A session restored after a restart keeps its epoch: records routed for it before are still its own. */
    public Session(String clientId, long epoch, long expiryIntervalSeconds, int maxQueued, boolean queueQos0Offline,
            DropCounter drops) {
        this.clientId = clientId;
        this.epoch = epoch;
        this.expiryIntervalSeconds = expiryIntervalSeconds;
        this.queueQos0Offline = queueQos0Offline;
        this.drops = drops;
        this.outbox = new Outbox(clientId, maxQueued, drops, new Outbox.Settled() {
            @Override
            public void acknowledged(int packetId, long score) {
                store.acknowledged(Session.this, packetId, score);
            }

            @Override
            public void released(int packetId, long score) {
                store.released(Session.this, packetId, score);
            }
        });
        this.storedOrder = new StoredOrder(outbox.queue());
    }

    /** Counts messages a session could not keep (queue full, offline QoS 0, expired). */
    public interface DropCounter {
        void dropped(String clientId, String reason);
    }

    public record SubscriptionEntry(TopicFilter filter, SubscriptionOptions options) {
    }

    public String clientId() {
        return clientId;
    }

    /** Random per session: records addressed to an ended or replaced session are recognised and dropped. */
    public long epoch() {
        return epoch;
    }

    public Persistence persistence() {
        return persistence;
    }

    public void persistence(Persistence p) {
        this.persistence = p;
        if (p == Persistence.DEVICE) {
            everDevice = true;
        }
    }

    /** Whether anything of this session may be in the DEVICE store (to load on resume, to clear at the end). */
    public boolean everDevice() {
        return everDevice;
    }

    public synchronized void store(SessionStore store) {
        this.store = store;
    }

    public long expiryIntervalSeconds() {
        return expiryIntervalSeconds;
    }

    public void expiryIntervalSeconds(long seconds) {
        this.expiryIntervalSeconds = seconds;
    }

    /** Deny rules checked per delivered message, or null when the client has none (the usual case). */
    public Acl deliveryAcl() {
        return deliveryAcl;
    }

    public void deliveryAcl(Acl acl) {
        this.deliveryAcl = acl != null && acl.restrictsDelivery() ? acl : null;
    }

    public boolean isConnected() {
        return sink != null;
    }

    /**
     * Whether a live connection owns this session: attached, or still finishing its CONNECT (its
     * stored messages loading). What this node announces to the others as connected.
     */
    public synchronized boolean hasConnection() {
        return owner != null;
    }

    /** The connection this session belongs to (see {@link #claim}), attached or not yet. */
    synchronized DeliverySink owner() {
        return owner;
    }

    /**
     * {@code connection} opened this session: it is the only one that may attach from now on,
     * and the previous connection stops receiving. Returns that previous connection, if another.
     */
    synchronized DeliverySink claim(DeliverySink connection) {
        DeliverySink previous = owner;
        owner = connection;
        if (sink != connection) {
            sink = null;
        }
        return previous == connection ? null : previous;
    }

    public Map<String, SubscriptionEntry> subscriptions() {
        return subscriptions;
    }

    // ---- outbound --------------------------------------------------------------------------

    /** Queues a message for the client; called by the routing threads. */
    public void offer(OutboundMessage message) {
        if (message.stored()) {
            offerStored(message);
            return;
        }
        DeliverySink target;
        synchronized (this) {
            if (ended) {
                return;
            }
            target = sink;
            if (target == null && message.qos() == 0 && !queueQos0Offline) {
                drops.dropped(clientId, "qos0-offline");
                return;
            }
            if (!outbox.add(message)) {
                return;
            }
        }
        if (target != null) {
            target.scheduleDrain();
        }
    }

    /**
     * A message the persistent store holds (it is never dropped here: the store keeps it), queued in
     * the store's order ({@link StoredOrder}); past a gap, the store is asked for what is missing
     * ({@link SessionStore#missed}).
     */
    private void offerStored(OutboundMessage message) {
        synchronized (this) {
            if (ended) {
                return;
            }
            DeliverySink target = sink;
            boolean gapsFillable = persistence == Persistence.DEVICE && store.fillsGaps();
            switch (storedOrder.arrived(message, target != null, gapsFillable)) {
                case QUEUED, RELEASED -> {
                    if (target != null) {
                        target.scheduleDrain();
                    }
                    return;
                }
                case HELD, IGNORED -> {
                    return;
                }
                case GAP -> {
                }
            }
        }
        store.missed(this);
    }

    /**
     * A catch-up load of the store is about to start ({@link SessionStore#missed}): false when the gap
     * has filled meanwhile (or a reconnect's load took over), so no load is needed.
     */
    public synchronized boolean requestFill() {
        return storedOrder.requestFill();
    }

    /**
     * The store's messages after a gap (see {@link SessionStore#missed}): those above what this
     * session already has are queued in order, then what arrived meanwhile as far as it continues
     * them. If a gap is left (a message written after the load, still on its way), the session keeps
     * holding and asks for another load. Nothing in flight is touched.
     */
    public int catchUp(List<OutboundMessage> stored, long storeLastScore) {
        DeliverySink target;
        boolean stillHolding;
        int found;
        synchronized (this) {
            found = storedOrder.caughtUp(stored, storeLastScore);
            if (found < 0) {
                return 0;
            }
            stillHolding = storedOrder.catchingUp();
            target = sink;
        }
        if (target != null) {
            target.scheduleDrain();
        }
        if (stillHolding) {
            store.missed(this);
        }
        return found;
    }

    /**
     * Looks at the store again while {@code target} is attached (see {@link SessionStore#recheck}):
     * what it holds above this session's last score is queued as after a gap.
     */
    public void recheckStore(DeliverySink target) {
        synchronized (this) {
            if (sink != target || !store.fillsGaps() || persistence != Persistence.DEVICE || !storedOrder.startRecheck()) {
                return;
            }
        }
        store.recheck(this);
    }

    /** Whether stored messages are held for a catch-up load (not a reconnect's). */
    public synchronized boolean catchingUp() {
        return storedOrder.catchingUp();
    }

    /** A catch-up load failed and the client is gone: the store keeps everything for its return. */
    public synchronized void abandonCatchUp() {
        storedOrder.abandonCatchUp();
    }

    /** Writes what the client's window and socket allow; on the event loop. */
    public void drain(DeliverySink target) {
        boolean wrote;
        synchronized (this) {
            if (sink != target) {
                return;
            }
            wrote = outbox.drainTo(target, System.currentTimeMillis());
        }
        if (wrote) {
            target.flush();
        }
    }

    /** PUBACK: the QoS 1 delivery is complete. Returns false for an unknown id. */
    public boolean onPuback(int packetId) {
        synchronized (this) {
            if (!outbox.pubAck(packetId)) {
                return false;
            }
        }
        drainLater();
        return true;
    }

    /**
     * PUBREC: the client has the QoS 2 message. Returns true if a PUBREL should follow; with an
     * error reason code (v5) the flow ends here and the id is free again.
     */
    public boolean onPubrec(int packetId, int reasonCode) {
        Outbox.Pubrec result;
        synchronized (this) {
            result = outbox.pubRec(packetId, reasonCode);
        }
        if (result == Outbox.Pubrec.ENDED) {
            drainLater();
        }
        return result == Outbox.Pubrec.PUBREL;
    }

    /** PUBCOMP: the QoS 2 delivery is complete. */
    public boolean onPubcomp(int packetId) {
        synchronized (this) {
            if (!outbox.pubComp(packetId)) {
                return false;
            }
        }
        drainLater();
        return true;
    }

    private void drainLater() {
        DeliverySink target = sink;
        if (target != null) {
            target.scheduleDrain();
        }
    }

    public synchronized int inflightCount() {
        return outbox.inFlightCount();
    }

    public synchronized int queuedCount() {
        return outbox.queuedCount();
    }

    /**
     * A reconnect attaches {@code target} and begins loading the DEVICE store. What memory held of
     * stored messages is dropped (the store is the truth, memory may predate a crash); store
     * messages arriving meanwhile wait. Returns false, doing nothing, if {@code target} no longer
     * owns the session.
     */
    public synchronized boolean beginLoading(DeliverySink target) {
        if (!attach(target)) {
            return false;
        }
        storedOrder.beginLoading();
        outbox.dropStored();
        return true;
    }

    public void restoredAfterRestart() {
        this.restoredAfterRestart = true;
    }

    /**
     * Stored messages up to this score were sent before and go out again with DUP: what this
     * process wrote, and, for a session restored after a restart, the store's marker (which may
     * count a message written to the store while connected but never sent: DUP errs on the safe side).
     */
    public synchronized long dupThreshold(long storeMarker) {
        long sent = outbox.sentScore();
        return restoredAfterRestart ? Math.max(sent, storeMarker) : sent;
    }

    public long version() {
        return version;
    }

    public void version(long v) {
        this.version = v;
    }

    public void will(byte[] encodedWill) {
        this.will = encodedWill;
    }

    /** The record of this session on {@code node} (its subscriptions as they are now). */
    public SessionState state(String node, boolean connected, long disconnectedAtMillis) {
        List<SessionState.Sub> subs = new java.util.ArrayList<>();
        for (SubscriptionEntry e : subscriptions.values()) {
            subs.add(new SessionState.Sub(e.filter().raw(), e.options()));
        }
        Acl acl = deliveryAcl;
        return new SessionState(clientId, epoch, persistence, expiryIntervalSeconds, disconnectedAtMillis, List.copyOf(subs), node,
                connected, version, connected ? will : null, acl == null ? List.of() : acl.denySubscribe());
    }

    /**
     * The store's content replaces what memory held of it (the store is the truth; memory may be
     * from before a crash): {@code released} ids owe a PUBREL, {@code stored} are queued in order,
     * then whatever arrived while loading and is newer.
     */
    public synchronized boolean restore(DeliverySink target, int[] released, List<OutboundMessage> stored, long storeLastScore) {
        if (sink != target) {
            // The loading connection closed or was replaced: the store keeps everything for the next one.
            abandonLoading(target);
            return false;
        }
        outbox.restore(released, stored);
        // What arrived while loading, as far as it continues the store's messages; past a gap, held as after one.
        if (storedOrder.loaded(stored, storeLastScore)) {
            sink.scheduleDrain();
        }
        return true;
    }

    /** After {@link #restore}: whether messages past a gap are held, so the store is to be asked again ({@link SessionStore#missed}). */
    public void fillGapAfterRestore() {
        synchronized (this) {
            if (!storedOrder.gapOpen() || !store.fillsGaps()) {
                return;
            }
        }
        store.missed(this);
    }

    /**
     * Loading for {@code target} failed or is no longer wanted: nothing is restored; the stored
     * messages wait for the next connect. A newer connection's loading is left alone.
     */
    public synchronized void abandonLoading(DeliverySink target) {
        if (owner != null && owner != target) {
            return;
        }
        storedOrder.abandonLoading();
    }

    // ---- inbound QoS 2 ---------------------------------------------------------------------

    /** Records a QoS 2 PUBLISH as received; false if that id is already waiting for PUBREL (a resend). */
    public synchronized boolean receiveQos2(int packetId) {
        return inboundQos2.add(packetId);
    }

    public synchronized boolean isAwaitingPubrel(int packetId) {
        return inboundQos2.contains(packetId);
    }

    /** PUBREL: releases the id; false if it was unknown. */
    public synchronized boolean release(int packetId) {
        return inboundQos2.remove(packetId);
    }

    public synchronized void forgetQos2(int packetId) {
        inboundQos2.remove(packetId);
    }

    // ---- connection lifecycle ----------------------------------------------------------------

    /**
     * Attaches the owning connection and re-sends what was in flight [MQTT-4.4.0-1]: PUBREL for
     * released messages at once, then the unacknowledged PUBLISHes with DUP ahead of the queue, as
     * far as this connection's Receive Maximum allows. Returns false, sending nothing, if
     * {@code target} no longer owns the session.
     */
    public boolean resume(DeliverySink target) {
        List<Integer> pubrels;
        synchronized (this) {
            if (!attach(target)) {
                return false;
            }
            pubrels = outbox.resendOnResume();
        }
        for (int packetId : pubrels) {
            target.writePubrel(packetId);
        }
        if (!pubrels.isEmpty()) {
            target.flush();
        }
        drain(target);
        return true;
    }

    /** Makes {@code target} the connection messages are written to, if it owns the session. */
    private boolean attach(DeliverySink target) {
        if (owner != target || ended) {
            return false;
        }
        sink = target;
        if (expiryTimer != null) {
            expiryTimer.cancel(false);
            expiryTimer = null;
        }
        return true;
    }

    /** The connection closed: if it owned the session, the session is offline now. Returns whether it did. */
    public synchronized boolean detach(DeliverySink target) {
        if (owner != target) {
            return false;
        }
        owner = null;
        sink = null;
        return true;
    }

    public synchronized void expiryTimer(ScheduledFuture<?> timer) {
        if (expiryTimer != null) {
            expiryTimer.cancel(false);
        }
        expiryTimer = timer;
    }

    /** Ends the session: nothing more is queued or sent. */
    public synchronized void end() {
        ended = true;
        outbox.clear();
        inboundQos2.clear();
        if (expiryTimer != null) {
            expiryTimer.cancel(false);
            expiryTimer = null;
        }
    }

    public synchronized boolean isEnded() {
        return ended;
    }
}
