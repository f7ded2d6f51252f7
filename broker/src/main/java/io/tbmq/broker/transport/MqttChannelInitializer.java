package io.tbmq.broker.transport;

import java.util.function.Supplier;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslContext;
import io.tbmq.broker.codec.MqttFrameValidator;
import io.tbmq.broker.config.MqttConfig;
import io.tbmq.broker.protocol.BrokerServices;
import io.tbmq.broker.protocol.PacketDispatcher;

/**
 * The pipeline of one connection, named stages in order:
 * limiter, [tls], [http, aggregator, websocket, wsFrames], flush, validator, decoder, encoder,
 * [keepAlive after CONNACK], dispatcher.
 */
public final class MqttChannelInitializer extends ChannelInitializer<SocketChannel> {
    private final String listener;
    private final Supplier<SslContext> ssl;
    private final String webSocketPath;
    private final ConnectionLimiter limiter;
    private final PacketDispatcher dispatcher;
    private final MqttConfig mqtt;
    private final WebSocketFrames frames = new WebSocketFrames();

    public MqttChannelInitializer(String listener, Supplier<SslContext> ssl, String webSocketPath, int maxConnections,
            int maxConnectionRate, BrokerServices broker) {
        this.listener = listener;
        this.ssl = ssl;
        this.webSocketPath = webSocketPath;
        this.limiter = new ConnectionLimiter(listener, maxConnections, maxConnectionRate, broker.metrics(),
                System::nanoTime);
        this.dispatcher = new PacketDispatcher(broker, listener);
        this.mqtt = broker.mqtt();
    }

    ConnectionLimiter limiter() {
        return limiter;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ChannelPipeline p = ch.pipeline();
        p.addLast("limiter", limiter);
        if (ssl != null) {
            p.addLast("tls", ssl.get().newHandler(ch.alloc()));
        }
        if (webSocketPath != null) {
            p.addLast("http", new HttpServerCodec());
            p.addLast("aggregator", new HttpObjectAggregator(8192));
            p.addLast("websocket", new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                    .websocketPath(webSocketPath).subprotocols("mqtt,mqttv3.1")
                    .maxFramePayloadLength(mqtt.maxPacketSize()).checkStartsWith(false).build()));
            p.addLast("wsFrames", frames);
        }
        // Consolidates the many small writes (acks, deliveries) of one read or one drain into few syscalls.
        p.addLast("flush", new FlushConsolidationHandler(64, true));
        addMqttStages(p, mqtt, dispatcher);
    }

    /** The MQTT stages every listener shares; unit tests build their pipelines with this too. */
    public static void addMqttStages(ChannelPipeline p, MqttConfig mqtt, PacketDispatcher dispatcher) {
        p.addLast("validator", new MqttFrameValidator(mqtt.maxPacketSize()));
        p.addLast("decoder", new MqttDecoder(mqtt.maxPacketSize(), Math.max(23, mqtt.maxClientIdLength())));
        p.addLast("encoder", MqttEncoder.INSTANCE);
        p.addLast(PacketDispatcher.NAME, dispatcher);
    }

    public String listener() {
        return listener;
    }
}
