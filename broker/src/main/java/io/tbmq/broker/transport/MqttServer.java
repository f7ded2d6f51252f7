package io.tbmq.broker.transport;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tbmq.broker.config.ListenersConfig;
import io.tbmq.broker.protocol.BrokerServices;
import io.tbmq.broker.protocol.Connection;
import io.tbmq.broker.util.Countdown;

/**
 * The MQTT listeners: TCP, TLS, WebSocket and secure WebSocket on one set of event loops.
 * Stopping is two steps, so shutdown can drain in between: stop accepting, then disconnect.
 */
public final class MqttServer {
    private static final Logger LOG = Logger.getLogger(MqttServer.class);

    private final ListenersConfig config;
    private final BrokerServices broker;
    private final ChannelGroup connections = new DefaultChannelGroup("mqtt", GlobalEventExecutor.INSTANCE);
    private final List<Channel> listeners = new ArrayList<>();
    private final List<ReloadableSslContext> tlsContexts = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, ConnectionLimiter> limiters = new java.util.concurrent.ConcurrentHashMap<>();
    private Transport transport;
    private EventLoopGroup boss;
    private EventLoopGroup workers;

    public MqttServer(ListenersConfig config, BrokerServices broker) {
        this.config = config;
        this.broker = broker;
    }

    public void start() {
        transport = Transport.choose(config.nativeTransport());
        // One I/O thread per core: more only adds context switches, the work per packet is short.
        int threads = config.workerThreads() > 0 ? config.workerThreads() : Runtime.getRuntime().availableProcessors();
        boss = transport.group(1, "mqtt-accept");
        workers = transport.group(threads, "mqtt-io");
        bind("tcp", config.tcp(), false, false);
        bind("tls", config.tls(), true, false);
        bind("ws", config.ws(), false, true);
        bind("wss", config.wss(), true, true);
        LOG.infof("MQTT listening on %s (%s transport, %d I/O threads)", ports, transport.name(), threads);
    }

    private void bind(String name, ListenersConfig.Listener cfg, boolean tls, boolean webSocket) {
        if (!cfg.enabled()) {
            return;
        }
        ReloadableSslContext ssl = tls ? new ReloadableSslContext(name, cfg) : null;
        if (ssl != null) {
            tlsContexts.add(ssl);
        }
        MqttChannelInitializer initializer = new MqttChannelInitializer(name, ssl == null ? null : ssl::get, webSocket ? cfg.path() : null,
                cfg.maxConnections(), cfg.maxConnectionRate(), broker);
        limiters.put(name, initializer.limiter());
        Channel channel = new ServerBootstrap()
                .group(boss, workers)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(64 * 1024, 256 * 1024))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        ch.pipeline().addLast(initializer);
                    }
                })
                .bind(cfg.host(), cfg.port()).syncUninterruptibly().channel();
        listeners.add(channel);
        ports.put(name, ((InetSocketAddress) channel.localAddress()).getPort());
    }

    /** Rebuilds the TLS contexts whose files changed; {@code outcome} hears of each change, applied or refused. */
    public void reloadTls(java.util.function.Consumer<Boolean> outcome) {
        for (ReloadableSslContext ssl : tlsContexts) {
            ssl.reloadIfChanged(outcome);
        }
    }

    /** Every connected client is checked again against the current credentials, on its own event loop. */
    public void recheckCredentials() {
        for (Channel ch : connections) {
            Connection c = Connection.of(ch);
            if (c != null) {
                ch.eventLoop().execute(c::recheckCredentials);
            }
        }
    }

    /** Applies a new tbmq.listeners.&lt;listener&gt;.max-connections; a listener that is not enabled ignores it. */
    public void maxConnections(String listener, int max) {
        java.util.Optional.ofNullable(limiters.get(listener)).ifPresent(l -> l.maxConnections(max));
    }

    /** Applies a new tbmq.listeners.&lt;listener&gt;.max-connection-rate (0 = no limit). */
    public void maxConnectionRate(String listener, int perSecond) {
        java.util.Optional.ofNullable(limiters.get(listener)).ifPresent(l -> l.maxConnectionRate(perSecond));
    }

    /** The port a listener is bound to (useful with port 0), or -1 if it is not enabled. */
    public int port(String listener) {
        return ports.getOrDefault(listener, -1);
    }

    public boolean isListening() {
        return !listeners.isEmpty() && listeners.stream().allMatch(Channel::isActive);
    }

    public int connectionCount() {
        return connections.size();
    }

    /** Step one of shutdown: no new connections. */
    public void stopAccepting() {
        for (Channel listener : listeners) {
            listener.close().syncUninterruptibly();
        }
    }

    /** Step two: from now on no client is sent a new QoS 1 or 2 message of a session that outlives its connection. */
    public void holdDeliveries() {
        broker.deliveryHold().hold();
    }

    /**
     * Step three: waits up to {@code timeout} for the clients to acknowledge the messages they have,
     * so that what they acknowledged is not sent to them again after they reconnect. Returns how
     * many were still unacknowledged.
     */
    public int awaitAcknowledged(Duration timeout) {
        return Countdown.awaitZero(this::inFlight, timeout);
    }

    /** QoS 1 and 2 messages sent and not yet acknowledged, over all connections. */
    public int inFlight() {
        int sum = 0;
        for (Channel ch : connections) {
            Connection c = Connection.of(ch);
            if (c != null) {
                sum += c.inFlight();
            }
        }
        return sum;
    }

    /**
     * Step four: every connection is told DISCONNECT 0x8B (v5), or 0x9C Use another server with
     * {@code serverReference} when one is configured, and closed.
     */
    public void disconnectAll(String serverReference) {
        for (Channel ch : connections) {
            Connection c = Connection.of(ch);
            if (c != null) {
                ch.eventLoop().execute(() -> c.serverShutdown(serverReference));
            } else {
                ch.close();
            }
        }
    }

    public void awaitClosed(Duration timeout) {
        Countdown.awaitZero(connections::size, timeout);
    }

    public void stop() {
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (workers != null) {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
