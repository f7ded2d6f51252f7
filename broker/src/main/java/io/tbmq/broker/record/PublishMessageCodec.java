package io.tbmq.broker.record;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary form of a {@link PublishMessage} in Kafka record values: compact (62-byte payloads
 * are the common case) and versioned by its first byte so nodes of different releases can share
 * topics during a rolling upgrade.
 *
 * <pre>
 * u8 version(1) | u8 flags(qos:2, retain:1, props:1) | i64 createdAtMicros | i64 expiresAtMillis
 * str publisherId | str topic | [props] | i32 payloadLength payload
 * props: u8 mask(pfi, contentType, responseTopic, correlation, user) then the present ones
 * str: u16 length + UTF-8 bytes; bin: i32 length + bytes
 * </pre>
 */
public final class PublishMessageCodec {
    private static final byte VERSION = 1;

    private PublishMessageCodec() {
    }

    public static byte[] encode(PublishMessage m) {
        byte[] publisher = m.publisherId().getBytes(StandardCharsets.UTF_8);
        byte[] topic = m.topic().getBytes(StandardCharsets.UTF_8);
        MessageProperties p = m.properties();
        boolean hasProps = !p.isEmpty();
        byte[] contentType = hasProps && p.contentType() != null ? p.contentType().getBytes(StandardCharsets.UTF_8) : null;
        byte[] responseTopic = hasProps && p.responseTopic() != null ? p.responseTopic().getBytes(StandardCharsets.UTF_8) : null;
        int size = 1 + 1 + 8 + 8 + 2 + publisher.length + 2 + topic.length + 4 + m.payload().length;
        if (hasProps) {
            size += 1 + 1;
            size += contentType != null ? 2 + contentType.length : 0;
            size += responseTopic != null ? 2 + responseTopic.length : 0;
            size += p.correlationData() != null ? 4 + p.correlationData().length : 0;
            size += 4;
        }
        byte[][] users = new byte[hasProps ? 2 * p.userProperties().size() : 0][];
        for (int i = 0; i < users.length; i += 2) {
            UserProperty u = p.userProperties().get(i / 2);
            users[i] = u.name().getBytes(StandardCharsets.UTF_8);
            users[i + 1] = u.value().getBytes(StandardCharsets.UTF_8);
            size += 4 + users[i].length + users[i + 1].length;
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put(VERSION);
        b.put((byte) (m.qos() | (m.retain() ? 0x04 : 0) | (hasProps ? 0x08 : 0)));
        b.putLong(m.createdAtMicros());
        b.putLong(m.expiresAtMillis());
        putShortBytes(b, publisher);
        putShortBytes(b, topic);
        if (hasProps) {
            int mask = (p.payloadFormatIndicator() >= 0 ? 1 : 0) | (contentType != null ? 2 : 0)
                    | (responseTopic != null ? 4 : 0) | (p.correlationData() != null ? 8 : 0)
                    | (!p.userProperties().isEmpty() ? 16 : 0);
            b.put((byte) mask);
            b.put((byte) Math.max(0, p.payloadFormatIndicator()));
            if (contentType != null) {
                putShortBytes(b, contentType);
            }
            if (responseTopic != null) {
                putShortBytes(b, responseTopic);
            }
            if (p.correlationData() != null) {
                b.putInt(p.correlationData().length).put(p.correlationData());
            }
            b.putInt(users.length / 2);
            for (byte[] nameOrValue : users) {
                putShortBytes(b, nameOrValue);
            }
        }
        b.putInt(m.payload().length).put(m.payload());
        return b.array();
    }

    public static PublishMessage decode(byte[] bytes) {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            byte version = b.get();
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown message format version " + version);
            }
            int flags = b.get();
            long created = b.getLong();
            long expires = b.getLong();
            String publisher = getShortString(b);
            String topic = getShortString(b);
            MessageProperties props = MessageProperties.NONE;
            if ((flags & 0x08) != 0) {
                int mask = b.get();
                int pfi = b.get();
                String contentType = (mask & 2) != 0 ? getShortString(b) : null;
                String responseTopic = (mask & 4) != 0 ? getShortString(b) : null;
                byte[] correlation = null;
                if ((mask & 8) != 0) {
                    correlation = new byte[length(b, b.getInt())];
                    b.get(correlation);
                }
                // A user property takes at least 4 bytes (two string lengths).
                int users = count(b, b.getInt(), 4);
                List<UserProperty> userProperties = users == 0 ? List.of() : new ArrayList<>(users);
                for (int i = 0; i < users; i++) {
                    userProperties.add(new UserProperty(getShortString(b), getShortString(b)));
                }
                props = new MessageProperties((mask & 1) != 0 ? pfi : -1, contentType, responseTopic, correlation,
                        users == 0 ? List.of() : List.copyOf(userProperties));
            }
            byte[] payload = new byte[length(b, b.getInt())];
            b.get(payload);
            return new PublishMessage(topic, flags & 0x03, (flags & 0x04) != 0, payload, props, publisher, created, expires);
        } catch (BufferUnderflowException | NegativeArraySizeException e) {
            throw new IllegalArgumentException("truncated message record", e);
        }
    }

    private static void putShortBytes(ByteBuffer b, byte[] bytes) {
        b.putShort((short) bytes.length).put(bytes);
    }

    /**
     * A length read from the record, checked against what is left of it: a corrupt length must be
     * refused as such, not allocated (two gigabytes would end the broker with OutOfMemoryError).
     */
    private static int length(ByteBuffer b, int length) {
        if (length < 0 || length > b.remaining()) {
            throw new IllegalArgumentException("corrupt message record: a length of " + length + " with " + b.remaining() + " bytes left");
        }
        return length;
    }

    private static int count(ByteBuffer b, int count, int minBytesEach) {
        if (count < 0 || (long) count * minBytesEach > b.remaining()) {
            throw new IllegalArgumentException("corrupt message record: " + count + " entries in " + b.remaining() + " bytes");
        }
        return count;
    }

    private static String getShortString(ByteBuffer b) {
        int length = length(b, Short.toUnsignedInt(b.getShort()));
        String s = new String(b.array(), b.position(), length, StandardCharsets.UTF_8);
        b.position(b.position() + length);
        return s;
    }
}
