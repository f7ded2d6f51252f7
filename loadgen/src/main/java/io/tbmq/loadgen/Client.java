package io.tbmq.loadgen;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;

/**
 * One MQTT connection of the load generator: the few packets a benchmark needs, no retries, no
 * persistence, nothing on the hot path but encoding and a counter. Publisher and subscriber roles
 * share it; all state is touched only on the connection's event loop.
 */
final class Client extends ChannelInboundHandlerAdapter {
    /** Packet ids cycle through 1..WINDOW; an id still unacknowledged when its turn comes means backpressure. */
    private static final int WINDOW = 1_024;

    private final String clientId;
    private final Options options;
    private final Stats stats;
    private final int index;
    private final CompletableFuture<Void> connected = new CompletableFuture<>();
    private final CompletableFuture<Void> subscribed = new CompletableFuture<>();
    private Channel channel;
    private int nextPacketId = 1;
    private long sequence;
    /** QoS 1/2 publishes awaiting their ack: packet id -> (sequence, sent time); sent time 0 = free. */
    private final long[] inflightSeq = new long[WINDOW + 1];
    private final long[] inflightSent = new long[WINDOW + 1];

    Client(String clientId, Options options, Stats stats, int index) {
        this.clientId = clientId;
        this.options = options;
        this.stats = stats;
        this.index = index;
    }

    CompletableFuture<Void> connected() {
        return connected;
    }

    CompletableFuture<Void> subscribed() {
        return subscribed;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        MqttVersion version = options.version() == 5 ? MqttVersion.MQTT_5 : MqttVersion.MQTT_3_1_1;
        ctx.channel().attr(io.netty.util.AttributeKey.<MqttVersion>valueOf("NETTY_CODEC_MQTT_VERSION")).set(version);
        boolean persistentSubscriber = options.persistent() && clientId.contains("-sub-");
        MqttProperties props = new MqttProperties();
        if (version == MqttVersion.MQTT_5 && persistentSubscriber) {
            props.add(new MqttProperties.IntegerProperty(MqttProperties.MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), 600));
        }
        var b = MqttMessageBuilders.connect().protocolVersion(version).clientId(clientId)
                .cleanSession(version == MqttVersion.MQTT_5 || !persistentSubscriber).keepAlive(60).properties(props);
        if (options.user() != null) {
            b.hasUser(true).username(options.user());
        }
        if (options.password() != null) {
            b.hasPassword(true).password(options.password().getBytes(StandardCharsets.UTF_8));
        }
        ctx.writeAndFlush(b.build());
    }

    void subscribe(String filter) {
        channel.writeAndFlush(MqttMessageBuilders.subscribe().messageId(1).addSubscription(MqttQoS.valueOf(options.qos()), filter)
                .build());
    }

    /** Sends the next message; on the event loop. */
    void publishNext(String topic) {
        if (options.qos() > 0 && inflightSent[nextPacketId] != 0) {
            stats.skippedBackpressure.increment();
            return;
        }
        long now = System.nanoTime();
        long seq = sequence++;
        ByteBuf payload = channel.alloc().buffer(options.payload());
        Payload.write(payload, now, seq, index, options.payload());
        int packetId = 0;
        if (options.qos() > 0) {
            packetId = nextPacketId;
            nextPacketId = nextPacketId == WINDOW ? 1 : nextPacketId + 1;
            inflightSeq[packetId] = seq;
            inflightSent[packetId] = now;
        }
        if (stats.inWindow(now)) {
            stats.sentInWindow.increment();
        }
        channel.writeAndFlush(new MqttPublishMessage(new MqttFixedHeader(MqttMessageType.PUBLISH, false,
                MqttQoS.valueOf(options.qos()), false, 0), new MqttPublishVariableHeader(topic, packetId), payload),
                channel.voidPromise());
        if (options.qos() == 0) {
            stats.accepted(index, seq, now, now, false);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (!(msg instanceof MqttMessage m) || m.decoderResult().isFailure()) {
                return;
            }
            switch (m.fixedHeader().messageType()) {
                case CONNACK -> {
                    MqttConnectReturnCode code = ((MqttConnAckMessage) m).variableHeader().connectReturnCode();
                    if (code == MqttConnectReturnCode.CONNECTION_ACCEPTED) {
                        connected.complete(null);
                    } else {
                        connected.completeExceptionally(new IllegalStateException(clientId + " refused: " + code));
                    }
                }
                case SUBACK -> subscribed.complete(null);
                case PUBLISH -> onPublish(ctx, (MqttPublishMessage) m);
                case PUBACK -> acknowledged(m);
                case PUBREC -> {
                    int id = ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
                    ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PUBREL, false, MqttQoS.AT_LEAST_ONCE,
                            false, 0), MqttMessageIdVariableHeader.from(id)), ctx.voidPromise());
                }
                case PUBREL -> {
                    int id = ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
                    ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PUBCOMP, false, MqttQoS.AT_MOST_ONCE,
                            false, 0), MqttMessageIdVariableHeader.from(id)), ctx.voidPromise());
                }
                case PUBCOMP -> acknowledged(m);
                default -> {
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void acknowledged(MqttMessage m) {
        int id = ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
        if (id <= 0 || id > WINDOW || inflightSent[id] == 0) {
            return;
        }
        long sent = inflightSent[id];
        inflightSent[id] = 0;
        if (m.variableHeader() instanceof MqttPubReplyMessageVariableHeader r && (r.reasonCode() & 0xFF) >= 0x80) {
            stats.ackErrors.increment();
            return;
        }
        stats.accepted(index, inflightSeq[id], sent, System.nanoTime(), true);
    }

    private void onPublish(ChannelHandlerContext ctx, MqttPublishMessage m) {
        long now = System.nanoTime();
        ByteBuf p = m.payload();
        if (p.readableBytes() >= Payload.HEADER) {
            stats.arrived(index, Payload.sequence(p), Payload.sentNanos(p), m.fixedHeader().isDup(), now);
        }
        int qos = m.fixedHeader().qosLevel().value();
        if (qos == 1) {
            ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
                    MqttMessageIdVariableHeader.from(m.variableHeader().packetId())), ctx.voidPromise());
        } else if (qos == 2) {
            ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PUBREC, false, MqttQoS.AT_MOST_ONCE, false, 0),
                    MqttMessageIdVariableHeader.from(m.variableHeader().packetId())), ctx.voidPromise());
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        connected.completeExceptionally(new IllegalStateException(clientId + " connection closed"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
