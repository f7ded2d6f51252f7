package io.tbmq.broker.session;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;

import io.tbmq.broker.record.OutboundMessage;

/**
 * A session's messages on their way to the client: the queue, and the in-flight window of QoS 1
 * and 2 messages written and not yet acknowledged, with their packet ids. The window is bounded by
 * what the connection allows ({@link DeliverySink#sendWindow}), the queue by
 * {@code tbmq.mqtt.max-queued-messages}.
 *
 * <p>Not thread-safe: the owning {@link Session} calls it under its monitor.
 */
final class Outbox {
    /** Hears of stored messages whose delivery ended or moved on, so their store can follow. */
    interface Settled {
        /** PUBACK, PUBCOMP, an error PUBREC, or a message too large for the client: done. */
        void acknowledged(int packetId, long score);

        /** PUBREC: only the PUBREL is owed now. */
        void released(int packetId, long score);
    }

    /** What a PUBREC did. */
    enum Pubrec {
        /** Released: a PUBREL follows. */
        PUBREL,
        /** An error reason code (v5): the flow ends here and the id is free again. */
        ENDED,
        /** No QoS 2 message in flight under that id. */
        UNKNOWN
    }

    private final ArrayDeque<OutboundMessage> queue = new ArrayDeque<>();
    private final InflightWindow inflight = new InflightWindow();
    private final String clientId;
    private final int maxQueued;
    private final Session.DropCounter drops;
    private final Settled settled;
    private int nextPacketId = 1;
    /** Highest store score written to the client by this process. */
    private long sentScore;
    /**
     * How many messages at the head of the queue a resumed connection gets again: their delivery
     * started, so their expiry no longer deletes them. Not the DUP flag: a store sets that on
     * messages it only may have sent.
     */
    private int resendsAtHead;

    Outbox(String clientId, int maxQueued, Session.DropCounter drops, Settled settled) {
        this.clientId = clientId;
        this.maxQueued = maxQueued;
        this.drops = drops;
        this.settled = settled;
    }

    /** The queue itself, for the stored messages {@link StoredOrder} lets in. */
    Queue<OutboundMessage> queue() {
        return queue;
    }

    /** Queues a message no store holds; false when it was dropped because the queue is full (counted). */
    boolean add(OutboundMessage message) {
        if (queue.size() >= maxQueued && !dropOldestQos0()) {
            drops.dropped(clientId, "queue-full");
            return false;
        }
        queue.add(message);
        return true;
    }

    private boolean dropOldestQos0() {
        for (Iterator<OutboundMessage> it = queue.iterator(); it.hasNext(); ) {
            if (it.next().qos() == 0) {
                it.remove();
                drops.dropped(clientId, "queue-full");
                return true;
            }
        }
        return false;
    }

    /** Writes to {@code target} what its window and socket allow, without flushing; returns whether anything was written. */
    boolean drainTo(DeliverySink target, long now) {
        boolean wrote = false;
        int window = target.sendWindow();
        while (!queue.isEmpty() && target.isWritable()) {
            OutboundMessage next = queue.peek();
            boolean resend = resendsAtHead > 0;
            if (!resend && next.message().isExpired(now)) {
                // Not yet started onward delivery: an expired copy is deleted [MQTT-3.3.2-5].
                queue.poll();
                drops.dropped(clientId, "expired");
                continue;
            }
            if (next.qos() == 0) {
                pollHead(resend);
                target.writePublish(next, 0, false);
                wrote = true;
                continue;
            }
            if (inflight.size() >= window) {
                break;
            }
            int packetId;
            if (next.packetId() != 0) {
                if (inflight.contains(next.packetId())) {
                    // The store wrapped onto an id still unacknowledged: wait for its ack.
                    break;
                }
                packetId = next.packetId();
            } else {
                packetId = allocatePacketId();
            }
            pollHead(resend);
            if (target.writePublish(next, packetId, next.dup())) {
                inflight.add(new InflightWindow.Entry(packetId, next));
                sentScore = Math.max(sentScore, next.score());
            } else if (next.stored()) {
                settled.acknowledged(packetId, next.score());
            }
            wrote = true;
        }
        return wrote;
    }

    private void pollHead(boolean resend) {
        queue.poll();
        if (resend) {
            resendsAtHead--;
        }
    }

    private int allocatePacketId() {
        // Skips ids still in flight: a Packet Identifier is reusable only after its ack [MQTT-2.2.1-3].
        for (int tries = 0; tries < 65535; tries++) {
            int id = nextPacketId;
            nextPacketId = id == 65535 ? 1 : id + 1;
            if (!inflight.contains(id)) {
                return id;
            }
        }
        throw new IllegalStateException("no free packet id for " + clientId);
    }

    /** PUBACK: the QoS 1 delivery is complete. False for an unknown id. */
    boolean pubAck(int packetId) {
        InflightWindow.Entry f = inflight.find(packetId);
        if (f == null || f.message.qos() != 1) {
            return false;
        }
        inflight.remove(packetId);
        if (f.message.stored()) {
            settled.acknowledged(packetId, f.message.score());
        }
        return true;
    }

    /** PUBREC: the client has the QoS 2 message. */
    Pubrec pubRec(int packetId, int reasonCode) {
        InflightWindow.Entry f = inflight.find(packetId);
        if (f == null || f.message.qos() != 2) {
            return Pubrec.UNKNOWN;
        }
        if (reasonCode >= 0x80) {
            inflight.remove(packetId);
            if (f.message.stored()) {
                settled.acknowledged(packetId, f.message.score());
            }
            return Pubrec.ENDED;
        }
        f.released = true;
        if (f.message.stored()) {
            settled.released(packetId, f.message.score());
        }
        return Pubrec.PUBREL;
    }

    /** PUBCOMP: the QoS 2 delivery is complete. False for an id that owes no PUBCOMP. */
    boolean pubComp(int packetId) {
        InflightWindow.Entry f = inflight.find(packetId);
        if (f == null || !f.released) {
            return false;
        }
        inflight.remove(packetId);
        if (f.message == null || f.message.stored()) {
            settled.acknowledged(packetId, f.message == null ? 0 : f.message.score());
        }
        return true;
    }

    /**
     * A resumed connection: the PUBLISHes in flight go back to the head of the queue, in send order,
     * with their packet ids and DUP [MQTT-4.4.0-1], so that they are written again within the new
     * connection's Receive Maximum [MQTT-3.3.4-9] and Maximum Packet Size [MQTT-3.1.2-25] like any
     * other. Returns the ids that owe a PUBREL: those stay in flight and are sent again at once.
     */
    List<Integer> resendOnResume() {
        List<Integer> pubrels = new ArrayList<>();
        List<OutboundMessage> again = new ArrayList<>();
        for (InflightWindow.Entry e : inflight.snapshot()) {
            if (e.released) {
                pubrels.add(e.packetId);
            } else {
                inflight.remove(e.packetId);
                OutboundMessage m = e.message;
                again.add(new OutboundMessage(m.message(), m.qos(), m.retain(), m.subscriptionIds(), e.packetId, m.score(), true));
            }
        }
        for (int i = again.size() - 1; i >= 0; i--) {
            queue.addFirst(again.get(i));
        }
        resendsAtHead += again.size();
        return pubrels;
    }

    int inFlightCount() {
        return inflight.size();
    }

    int queuedCount() {
        return queue.size();
    }

    long sentScore() {
        return sentScore;
    }

    /**
     * A reconnect loads the store: what memory holds of stored messages goes (the store is the truth),
     * except the PUBRELs owed: should the load fail, the session resumes without it and still owes them.
     */
    void dropStored() {
        queue.removeIf(OutboundMessage::stored);
        resendsAtHead = 0;
        for (InflightWindow.Entry e : inflight.snapshot()) {
            if (!e.released && e.message.stored()) {
                inflight.remove(e.packetId);
            }
        }
    }

    /**
     * The store's content replaces what memory held of it: {@code released} ids owe a PUBREL,
     * {@code stored} are queued in order ahead of the messages only memory has.
     */
    void restore(int[] released, List<OutboundMessage> stored) {
        // What only memory has in flight (a retained copy sent on subscribe) stays, to be sent again.
        for (InflightWindow.Entry e : inflight.snapshot()) {
            if (e.message == null || e.message.stored()) {
                inflight.remove(e.packetId);
            }
        }
        resendsAtHead = 0;
        queue.removeIf(OutboundMessage::stored);
        for (int packetId : released) {
            // An id only memory used gives way to the store's: its message is not sent again.
            inflight.remove(packetId);
            InflightWindow.Entry e = new InflightWindow.Entry(packetId, null);
            e.released = true;
            inflight.add(e);
        }
        ArrayDeque<OutboundMessage> inMemoryOnly = new ArrayDeque<>(queue);
        queue.clear();
        queue.addAll(stored);
        queue.addAll(inMemoryOnly);
    }

    /** The session ended: nothing more goes out. */
    void clear() {
        queue.clear();
        inflight.clear();
        resendsAtHead = 0;
    }
}
