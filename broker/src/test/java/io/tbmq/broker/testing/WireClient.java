package io.tbmq.broker.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttSubscriptionOption;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import io.tbmq.broker.codec.MqttFrameValidator;

/**
 * A byte-level MQTT client on one {@link EmbeddedChannel} of a {@link TestBroker}: packets are
 * encoded by Netty's client-side encoder (or written as raw hex) into the broker's real pipeline,
 * and the broker's bytes are decoded back into packets. Runs the channel's tasks as it goes.
 */
public final class WireClient implements AutoCloseable {
    private final EmbeddedChannel server;
    private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
    private final EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder(16 * 1024 * 1024));
    private final Deque<MqttMessage> received = new ArrayDeque<>();
    /** Packets given to the test; released when the client closes, so tests need not. */
    private final List<MqttMessage> handedOut = new ArrayList<>();
    private final ByteArrayOutputStream rawReceived = new ByteArrayOutputStream();
    private MqttVersion version;
    private int keepAlive = 60;

    WireClient(EmbeddedChannel server, MqttVersion version) {
        this.server = server;
        version(version);
    }

    public void version(MqttVersion v) {
        this.version = v;
        encoder.attr(MqttFrameValidator.VERSION).set(v);
        decoder.attr(MqttFrameValidator.VERSION).set(v);
    }

    /** Keep alive sent by the following connects, in seconds. */
    public void keepAlive(int seconds) {
        this.keepAlive = seconds;
    }

    public EmbeddedChannel channel() {
        return server;
    }

    // ---- sending ---------------------------------------------------------------------------

    public void send(MqttMessage message) {
        encoder.writeOutbound(message);
        ByteBuf buf;
        while ((buf = encoder.readOutbound()) != null) {
            server.writeInbound(buf);
        }
        pump();
    }

    public void sendHex(String hex) {
        sendBytes(Hex.bytes(hex));
    }

    public void sendBytes(byte[] bytes) {
        server.writeInbound(Unpooled.wrappedBuffer(bytes));
        pump();
    }

    /** Runs the channel's pending and due tasks (authentication replies, drains, acks). */
    public void pump() {
        for (int i = 0; i < 5; i++) {
            server.runPendingTasks();
            server.runScheduledPendingTasks();
        }
    }

    public void advanceTime(long amount, TimeUnit unit) {
        server.advanceTimeBy(amount, unit);
        pump();
    }

    // ---- receiving -------------------------------------------------------------------------

    private void collect() {
        pump();
        Object out;
        while ((out = server.readOutbound()) != null) {
            ByteBuf buf = (ByteBuf) out;
            byte[] bytes = new byte[buf.readableBytes()];
            buf.getBytes(buf.readerIndex(), bytes);
            rawReceived.writeBytes(bytes);
            decoder.writeInbound(buf);
        }
        Object packet;
        while ((packet = decoder.readInbound()) != null) {
            received.add((MqttMessage) packet);
        }
    }

    /** Every byte the broker sent since the last call. */
    public byte[] rawBytes() {
        collect();
        byte[] bytes = rawReceived.toByteArray();
        rawReceived.reset();
        received.forEach(ReferenceCountUtil::release);
        received.clear();
        return bytes;
    }

    /** The next packet the broker sent, or null. */
    public MqttMessage receive() {
        collect();
        MqttMessage m = received.poll();
        if (m != null) {
            handedOut.add(m);
        }
        return m;
    }

    public List<MqttMessage> receiveAll() {
        collect();
        List<MqttMessage> all = new ArrayList<>(received);
        received.clear();
        handedOut.addAll(all);
        return all;
    }

    /** The next packet, which must be of {@code type}. */
    @SuppressWarnings("unchecked")
    public <T extends MqttMessage> T expect(MqttMessageType type) {
        MqttMessage m = receive();
        if (m == null) {
            throw new AssertionError("expected " + type + " but the broker sent nothing (open: " + server.isOpen() + ")");
        }
        if (m.fixedHeader().messageType() != type) {
            throw new AssertionError("expected " + type + " but got " + m);
        }
        return (T) m;
    }

    public void expectNothing() {
        MqttMessage m = receive();
        if (m != null) {
            throw new AssertionError("expected nothing but got " + m);
        }
    }

    public boolean isOpen() {
        pump();
        return server.isOpen();
    }

    // ---- packet shortcuts ------------------------------------------------------------------

    public MqttConnAckMessage connect(String clientId, boolean cleanStart) {
        return connect(clientId, cleanStart, "alice", TestBroker.PASSWORD, MqttProperties.NO_PROPERTIES);
    }

    public MqttConnAckMessage connect(String clientId, boolean cleanStart, String user, String password, MqttProperties props) {
        MqttMessageBuilders.ConnectBuilder b = MqttMessageBuilders.connect().protocolVersion(version).clientId(clientId)
                .cleanSession(cleanStart).keepAlive(keepAlive).properties(props);
        if (user != null) {
            b.hasUser(true).username(user);
        }
        if (password != null) {
            b.hasPassword(true).password(password.getBytes(StandardCharsets.UTF_8));
        }
        send(b.build());
        return expect(MqttMessageType.CONNACK);
    }

    public MqttConnAckMessage connectAccepted(String clientId, boolean cleanStart) {
        MqttConnAckMessage ack = connect(clientId, cleanStart);
        if (ack.variableHeader().connectReturnCode() != MqttConnectReturnCode.CONNECTION_ACCEPTED) {
            throw new AssertionError("CONNECT refused: " + ack.variableHeader());
        }
        return ack;
    }

    public void publish(String topic, int qos, String payload, int packetId) {
        publish(topic, qos, false, payload, packetId, MqttProperties.NO_PROPERTIES);
    }

    public void publish(String topic, int qos, boolean retain, String payload, int packetId, MqttProperties props) {
        send(MqttMessageBuilders.publish().topicName(topic).qos(MqttQoS.valueOf(qos)).retained(retain).messageId(packetId)
                .payload(Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8)).properties(props).build());
    }

    public void subscribe(int packetId, String filter, int qos) {
        subscribe(packetId, filter, new MqttSubscriptionOption(MqttQoS.valueOf(qos), false, false,
                MqttSubscriptionOption.RetainedHandlingPolicy.SEND_AT_SUBSCRIBE), MqttProperties.NO_PROPERTIES);
    }

    public void subscribe(int packetId, String filter, MqttSubscriptionOption option, MqttProperties props) {
        send(MqttMessageBuilders.subscribe().messageId(packetId).addSubscription(filter, option).properties(props).build());
    }

    public void unsubscribe(int packetId, String filter) {
        send(MqttMessageBuilders.unsubscribe().messageId(packetId).addTopicFilter(filter).build());
    }

    public void ack(MqttMessageType type, int packetId) {
        MqttQoS qos = type == MqttMessageType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE;
        send(new MqttMessage(new MqttFixedHeader(type, false, qos, false, 0),
                new MqttPubReplyMessageVariableHeader(packetId, (byte) 0, MqttProperties.NO_PROPERTIES)));
    }

    public void disconnect(int reasonCode) {
        send(new MqttMessage(new MqttFixedHeader(MqttMessageType.DISCONNECT, false, MqttQoS.AT_MOST_ONCE, false, 0),
                new MqttReasonCodeAndPropertiesVariableHeader((byte) reasonCode, MqttProperties.NO_PROPERTIES)));
    }

    /** A subscriber-side PUBLISH: its text payload. */
    public static String text(MqttPublishMessage m) {
        return m.payload().toString(StandardCharsets.UTF_8);
    }

    public static int packetId(MqttMessage m) {
        if (m instanceof MqttPublishMessage p) {
            return p.variableHeader().packetId();
        }
        return ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
    }

    /** The reason code of a v5 ack, DISCONNECT or CONNACK. */
    public static int reasonCode(MqttMessage m) {
        Object h = m.variableHeader();
        if (h instanceof MqttPubReplyMessageVariableHeader r) {
            return r.reasonCode() & 0xFF;
        }
        if (h instanceof MqttReasonCodeAndPropertiesVariableHeader r) {
            return r.reasonCode() & 0xFF;
        }
        if (m instanceof MqttConnAckMessage c) {
            return c.variableHeader().connectReturnCode().byteValue() & 0xFF;
        }
        return 0;
    }

    /** Simulates the network going away (no DISCONNECT). */
    public void drop() {
        server.close();
        pump();
    }

    @Override
    public void close() {
        received.forEach(ReferenceCountUtil::release);
        received.clear();
        handedOut.forEach(ReferenceCountUtil::release);
        handedOut.clear();
        server.finishAndReleaseAll();
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }
}
