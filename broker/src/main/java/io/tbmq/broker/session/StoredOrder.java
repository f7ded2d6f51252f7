package io.tbmq.broker.session;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;

import io.tbmq.broker.record.OutboundMessage;

/**
 * Keeps a session's stored messages in their store's order on the way to its queue. DEVICE scores
 * are consecutive, and every node's router writes them, so one node's message can reach the session
 * before an earlier-scored one from another node: a message past a gap is held until the gap fills,
 * from arrivals or from a load of the store. A reconnect's load replaces what memory held; messages
 * arriving meanwhile are held and merged after it.
 *
 * <p>Not thread-safe: the owning {@link Session} calls it under its monitor.
 */
final class StoredOrder {
    /** What became of a stored message that arrived. */
    enum Arrival {
        /** Queued: it continues the order. */
        QUEUED,
        /** Held while the store loads or a gap is open; queued once the order reaches it. */
        HELD,
        /** Held, and it let messages held before it into the queue. */
        RELEASED,
        /** It opened a gap: held, and the store is to be asked for what is missing. */
        GAP,
        /** Already queued or sent, or the client is offline: the store keeps it. */
        IGNORED
    }

    private final Queue<OutboundMessage> queue;
    /** Highest store score queued or sent: a store message at or below it is already here. */
    private long lastScore;
    /** A reconnect is loading the store: its restore, not a catch-up, takes what waits. */
    private boolean reconnectLoading;
    /** Between a reconnect (or a gap) and the end of loading the store, store messages wait here. */
    private List<OutboundMessage> held;
    /** A catch-up load of the store is under way: holding ends with its result, not before. */
    private boolean fillRequested;

    StoredOrder(Queue<OutboundMessage> queue) {
        this.queue = queue;
    }

    /**
     * A stored message for the session; {@code connected}: a client is attached; {@code gapsFillable}:
     * scores are consecutive (DEVICE) and a store can fill a gap.
     */
    Arrival arrived(OutboundMessage message, boolean connected, boolean gapsFillable) {
        if (held != null) {
            held.add(message);
            return !reconnectLoading && releaseConsecutive() ? Arrival.RELEASED : Arrival.HELD;
        }
        if (message.score() <= lastScore || !connected) {
            return Arrival.IGNORED;
        }
        if (!gapsFillable || message.score() == lastScore + 1) {
            lastScore = message.score();
            queue.add(message);
            return Arrival.QUEUED;
        }
        held = new ArrayList<>();
        held.add(message);
        return Arrival.GAP;
    }

    /**
     * Held messages that continue the last score go to the queue, in score order; holding ends when
     * none is left and no load of the store is awaited. Returns whether any was queued.
     */
    private boolean releaseConsecutive() {
        held.sort(Comparator.comparingLong(OutboundMessage::score));
        int next = 0;
        boolean queued = false;
        while (next < held.size() && held.get(next).score() <= lastScore + 1) {
            OutboundMessage m = held.get(next++);
            if (m.score() == lastScore + 1) {
                queue.add(m);
                lastScore = m.score();
                queued = true;
            }
        }
        held.subList(0, next).clear();
        if (held.isEmpty() && !fillRequested) {
            held = null;
        }
        return queued;
    }

    /** A catch-up load is about to start: false when the gap filled meanwhile (or a reconnect's load took over). */
    boolean requestFill() {
        if (held == null || reconnectLoading) {
            return false;
        }
        fillRequested = true;
        return true;
    }

    /**
     * A catch-up load's result: those above what the session has are queued in order, then what was
     * held as far as it continues them. Returns how many stored messages were new, or -1 when no
     * catch-up was awaited.
     */
    int caughtUp(List<OutboundMessage> stored, long storeLastScore) {
        if (held == null || reconnectLoading) {
            return -1;
        }
        fillRequested = false;
        int found = 0;
        for (OutboundMessage m : stored) {
            if (m.score() > lastScore) {
                queue.add(m);
                lastScore = m.score();
                found++;
            }
        }
        // Everything the store assigned up to its last score is in stored or gone for good.
        lastScore = Math.max(lastScore, storeLastScore);
        releaseConsecutive();
        return found;
    }

    /** Starts holding for a recheck of the store; false if something is held or loading already. */
    boolean startRecheck() {
        if (held != null) {
            return false;
        }
        held = new ArrayList<>();
        fillRequested = true;
        return true;
    }

    /** Whether messages are held for a catch-up load (not a reconnect's). */
    boolean catchingUp() {
        return held != null && !reconnectLoading;
    }

    /** Whether messages past a gap are held with no load asked for yet. */
    boolean gapOpen() {
        return held != null && !reconnectLoading && !fillRequested;
    }

    /** A catch-up load failed and the client is gone: the store keeps everything for its return. */
    void abandonCatchUp() {
        if (!reconnectLoading) {
            held = null;
            fillRequested = false;
        }
    }

    /** A reconnect starts loading the store: what arrives meanwhile is held; the store's content replaces memory's. */
    void beginLoading() {
        reconnectLoading = true;
        if (held == null) {
            held = new ArrayList<>();
        }
        lastScore = 0;
    }

    /**
     * The reconnect's load: {@code stored} was queued by the session (the store is the truth); what
     * arrived while loading follows as far as it continues them; past a gap it is held as after one.
     * Returns whether any of what arrived was queued.
     */
    boolean loaded(List<OutboundMessage> stored, long storeLastScore) {
        for (OutboundMessage m : stored) {
            lastScore = Math.max(lastScore, m.score());
        }
        // Everything the store assigned up to its last score is in stored or gone for good.
        lastScore = Math.max(lastScore, storeLastScore);
        reconnectLoading = false;
        fillRequested = false;
        return held != null && releaseConsecutive();
    }

    /** Loading failed or is no longer wanted: nothing is held; the stored messages wait for the next connect. */
    void abandonLoading() {
        held = null;
        reconnectLoading = false;
        fillRequested = false;
    }
}
