package io.tbmq.broker.record;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;


/**
 * One client's session as the cluster sees it: the value of a record in the compacted topic
 * tbmq.client.session (key = client id; an empty value ends the session). Every node reads the
 * topic, so this is how a node learns where a client is ({@code node}, {@code connected}), what
 * it subscribed to (each node keeps the whole subscription trie), and what to do if its node dies
 * (the Will, the expiry).
 *
 * <p>{@code version} orders the records of one client written by different nodes: a connect
 * takes the highest version seen plus one, and a record older than what a node holds is stale
 * (a late write of a node that lost the client). Ties go to the greater node id.
 *
 * @param will the connection's Will ({@code WillCodec} bytes), null when none
 * @param denyReceive deny patterns of the client's ACL, so a node routing to it withholds those topics
 */
public record SessionState(String clientId, long epoch, Persistence persistence, long expiryIntervalSeconds,
        long disconnectedAtMillis, List<Sub> subscriptions, String node, boolean connected, long version, byte[] will,
        List<String> denyReceive) {

    public record Sub(String filter, SubscriptionOptions options) {
    }

    private static final byte VERSION = 2;

    /** Whether this record replaces one at {@code otherVersion} written by {@code otherNode}. */
    public boolean supersedes(long otherVersion, String otherNode) {
        return version > otherVersion || (version == otherVersion && node.compareTo(otherNode) >= 0);
    }

    public boolean persistent() {
        return expiryIntervalSeconds > 0;
    }

    public byte[] encode() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeByte(VERSION);
            out.writeLong(epoch);
            out.writeByte(persistence.ordinal());
            out.writeLong(expiryIntervalSeconds);
            out.writeLong(disconnectedAtMillis);
            out.writeInt(subscriptions.size());
            for (Sub s : subscriptions) {
                out.writeUTF(s.filter());
                SubscriptionOptions o = s.options();
                out.writeByte(o.qos());
                out.writeBoolean(o.noLocal());
                out.writeBoolean(o.retainAsPublished());
                out.writeByte(o.retainHandling());
                out.writeInt(o.subscriptionId());
            }
            out.writeUTF(node);
            out.writeBoolean(connected);
            out.writeLong(version);
            out.writeInt(will == null ? -1 : will.length);
            if (will != null) {
                out.write(will);
            }
            out.writeInt(denyReceive.size());
            for (String pattern : denyReceive) {
                out.writeUTF(pattern);
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Decodes a record; version 1 records (single-node releases) read as disconnected, owned by {@code legacyNode}. */
    public static SessionState decode(String clientId, byte[] value, String legacyNode) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(value));
            byte format = in.readByte();
            if (format != 1 && format != VERSION) {
                throw new IllegalArgumentException("unknown session state version " + format);
            }
            long epoch = in.readLong();
            Persistence persistence = Persistence.values()[in.readByte()];
            long expiry = in.readLong();
            long disconnectedAt = in.readLong();
            // A subscription takes at least 10 bytes (filter length, options).
            int n = count(in, in.readInt(), 10);
            List<Sub> subs = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String filter = in.readUTF();
                subs.add(new Sub(filter, new SubscriptionOptions(in.readByte(), in.readBoolean(), in.readBoolean(), in.readByte(),
                        in.readInt())));
            }
            if (format == 1) {
                return new SessionState(clientId, epoch, persistence, expiry, disconnectedAt, List.copyOf(subs), legacyNode,
                        disconnectedAt == 0, 0, null, List.of());
            }
            String node = in.readUTF();
            boolean connected = in.readBoolean();
            long version = in.readLong();
            int willLength = in.readInt();
            byte[] will = null;
            if (willLength >= 0) {
                will = new byte[count(in, willLength, 1)];
                in.readFully(will);
            }
            int d = count(in, in.readInt(), 2);
            List<String> deny = new ArrayList<>(d);
            for (int i = 0; i < d; i++) {
                deny.add(in.readUTF());
            }
            return new SessionState(clientId, epoch, persistence, expiry, disconnectedAt, List.copyOf(subs), node, connected,
                    version, will, List.copyOf(deny));
        } catch (IOException | ArrayIndexOutOfBoundsException | NegativeArraySizeException e) {
            throw new IllegalArgumentException("truncated or corrupt session state", e);
        }
    }

    /**
     * A count or length read from the record, checked against the bytes left: a corrupt one must be
     * refused as such, not allocated (two gigabytes would end the broker with OutOfMemoryError).
     */
    private static int count(DataInputStream in, int count, int minBytesEach) throws IOException {
        if (count < 0 || (long) count * minBytesEach > in.available()) {
            throw new IllegalArgumentException("corrupt session state: " + count + " entries in " + in.available() + " bytes");
        }
        return count;
    }

        /** The same session, now disconnected, owned by {@code newNode} (a node adopting the sessions of a dead one). */
    public SessionState adoptedBy(String newNode, long disconnectedAt) {
        return new SessionState(clientId, epoch, persistence, expiryIntervalSeconds,
                this.disconnectedAtMillis != 0 && !connected ? this.disconnectedAtMillis : disconnectedAt, subscriptions, newNode,
                false, version + 1, null, denyReceive);
    }
}
