package io.tbmq.broker.session;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.tbmq.broker.subscription.SubscriptionOptions;

/**
 * What survives of a persistent session when its broker restarts: identity (epoch), where its
 * messages live, expiry, when it disconnected and its subscriptions. The value of a record in the
 * compacted topic tbmq.client.session (key = client id; an empty value ends the session).
 */
public record SessionState(String clientId, long epoch, Persistence persistence, long expiryIntervalSeconds,
        long disconnectedAtMillis, List<Sub> subscriptions) {

    public record Sub(String filter, SubscriptionOptions options) {
    }

    private static final byte VERSION = 1;

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
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static SessionState decode(String clientId, byte[] value) {
        try {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(value));
            if (in.readByte() != VERSION) {
                throw new IllegalArgumentException("unknown session state version");
            }
            long epoch = in.readLong();
            Persistence persistence = Persistence.values()[in.readByte()];
            long expiry = in.readLong();
            long disconnectedAt = in.readLong();
            int n = in.readInt();
            List<Sub> subs = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String filter = in.readUTF();
                subs.add(new Sub(filter, new SubscriptionOptions(in.readByte(), in.readBoolean(), in.readBoolean(), in.readByte(),
                        in.readInt())));
            }
            return new SessionState(clientId, epoch, persistence, expiry, disconnectedAt, List.copyOf(subs));
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated session state", e);
        }
    }
}
