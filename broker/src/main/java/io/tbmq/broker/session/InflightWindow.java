package io.tbmq.broker.session;

import java.util.ArrayList;
import java.util.List;
import io.tbmq.broker.record.OutboundMessage;

/**
 * Messages sent to a client and not yet acknowledged, in send order. The window is small (the
 * client's Receive Maximum, at most a few hundred, usually one or two), so a plain array scanned by
 * packet id beats a hash map: no boxing, no hashing, and resends come out in order for free.
 */
final class InflightWindow {
    static final class Entry {
        final int packetId;
        final OutboundMessage message;
        /** QoS 2 after PUBREC: the PUBLISH is done, PUBREL awaits PUBCOMP. */
        boolean released;

        Entry(int packetId, OutboundMessage message) {
            this.packetId = packetId;
            this.message = message;
        }
    }

    private Entry[] entries = new Entry[4];
    private int size;

    int size() {
        return size;
    }

    void add(Entry e) {
        if (size == entries.length) {
            entries = java.util.Arrays.copyOf(entries, size * 2);
        }
        entries[size++] = e;
    }

    Entry find(int packetId) {
        for (int i = 0; i < size; i++) {
            if (entries[i].packetId == packetId) {
                return entries[i];
            }
        }
        return null;
    }

    boolean contains(int packetId) {
        return find(packetId) != null;
    }

    void remove(int packetId) {
        for (int i = 0; i < size; i++) {
            if (entries[i].packetId == packetId) {
                System.arraycopy(entries, i + 1, entries, i, size - i - 1);
                entries[--size] = null;
                return;
            }
        }
    }

    List<Entry> snapshot() {
        List<Entry> copy = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            copy.add(entries[i]);
        }
        return copy;
    }

    void clear() {
        java.util.Arrays.fill(entries, 0, size, null);
        size = 0;
    }
}
