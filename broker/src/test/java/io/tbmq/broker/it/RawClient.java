package io.tbmq.broker.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import io.tbmq.broker.codec.MqttFrameValidator;

/**
 * A blocking MQTT client over a plain socket, for tests that must see packet ids and DUP flags,
 * which high-level clients hide. Netty's codec encodes and decodes, nothing acknowledges by itself.
 */
final class RawClient implements AutoCloseable {
    /** A received PUBLISH: what tests look at, copied out of the packet. */
    record Received(String topic, int qos, int packetId, boolean dup, String payload) {
    }

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
    private final EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder(1 << 20));
    private final Deque<MqttMessage> pending = new ArrayDeque<>();
    private final MqttVersion version;

    RawClient(int port, MqttVersion version) throws IOException {
        this.socket = new Socket("127.0.0.1", port);
        this.socket.setSoTimeout(200);
        this.out = socket.getOutputStream();
        this.in = socket.getInputStream();
        this.version = version;
        encoder.attr(MqttFrameValidator.VERSION).set(version);
        decoder.attr(MqttFrameValidator.VERSION).set(version);
    }

    void send(MqttMessage m) throws IOException {
        encoder.writeOutbound(m);
        ByteBuf buf;
        while ((buf = encoder.readOutbound()) != null) {
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            buf.release();
            out.write(bytes);
        }
        out.flush();
    }

    /** Connects as {@code user} with a persistent session (v3: clean session off; v5: the given expiry). */
    MqttConnAckMessage connect(String clientId, String user, boolean cleanStart, int sessionExpiry) throws IOException {
        MqttProperties props = new MqttProperties();
        if (version == MqttVersion.MQTT_5 && sessionExpiry > 0) {
            props.add(new MqttProperties.IntegerProperty(MqttProperties.MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), sessionExpiry));
        }
        send(MqttMessageBuilders.connect().protocolVersion(version).clientId(clientId).cleanSession(cleanStart).keepAlive(60)
                .hasUser(true).username(user).hasPassword(true).password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .properties(props).build());
        MqttMessage m = next(10_000);
        if (!(m instanceof MqttConnAckMessage ack)) {
            throw new IllegalStateException("expected CONNACK, got " + m);
        }
        return ack;
    }

    void subscribe(String filter, int qos) throws IOException {
        send(MqttMessageBuilders.subscribe().messageId(1).addSubscription(MqttQoS.valueOf(qos), filter).build());
        MqttMessage m = next(10_000);
        if (m == null || m.fixedHeader().messageType() != MqttMessageType.SUBACK) {
            throw new IllegalStateException("expected SUBACK, got " + m);
        }
        ReferenceCountUtil.release(m);
    }

    void ack(MqttMessageType type, int packetId) throws IOException {
        MqttQoS qos = type == MqttMessageType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE;
        send(new MqttMessage(new MqttFixedHeader(type, false, qos, false, 0), MqttMessageIdVariableHeader.from(packetId)));
    }

    /** The next PUBLISH within {@code timeoutMillis}, or null; a PUBREL is answered with PUBCOMP, other packets are skipped. */
    Received nextPublish(long timeoutMillis) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            MqttMessage m = next(deadline - System.currentTimeMillis());
            if (m instanceof MqttPublishMessage p) {
                Received r = new Received(p.variableHeader().topicName(), p.fixedHeader().qosLevel().value(),
                        p.variableHeader().packetId(), p.fixedHeader().isDup(), p.payload().toString(StandardCharsets.UTF_8));
                p.release();
                return r;
            }
            if (m != null && m.fixedHeader().messageType() == MqttMessageType.PUBREL) {
                ack(MqttMessageType.PUBCOMP, ((MqttMessageIdVariableHeader) m.variableHeader()).messageId());
            }
            ReferenceCountUtil.release(m);
        }
        return null;
    }

    /** The next packet of any kind within {@code timeoutMillis}, or null; the caller releases it. */
    MqttMessage nextPacket(long timeoutMillis) throws IOException {
        return next(timeoutMillis);
    }

    private MqttMessage next(long timeoutMillis) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (pending.isEmpty() && System.currentTimeMillis() < deadline) {
            byte[] buf = new byte[8192];
            int n;
            try {
                n = in.read(buf);
            } catch (SocketTimeoutException e) {
                continue;
            }
            if (n < 0) {
                throw new IOException("connection closed by the broker");
            }
            decoder.writeInbound(Unpooled.wrappedBuffer(buf, 0, n));
            Object o;
            while ((o = decoder.readInbound()) != null) {
                pending.add((MqttMessage) o);
            }
        }
        return pending.poll();
    }

    @Override
    public void close() {
        pending.forEach(ReferenceCountUtil::release);
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }
}
