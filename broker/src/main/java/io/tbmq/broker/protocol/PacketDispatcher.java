package io.tbmq.broker.protocol;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.tbmq.broker.codec.InvalidPacket;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * The last inbound stage: creates the {@link Connection} of a new channel and hands each decoded
 * packet to the handler of its type. Packets that arrive behind a CONNECT still being
 * authenticated are held and replayed after CONNACK, in order.
 */
@ChannelHandler.Sharable
public final class PacketDispatcher extends ChannelInboundHandlerAdapter {
    public static final String NAME = "dispatcher";
    private static final Logger LOG = Logger.getLogger(PacketDispatcher.class);
    private static final RateLimitedLog ERRORS = new RateLimitedLog(LOG, 5);
    /** A port scanner or a client that never speaks MQTT: one line a second at most. */
    private static final RateLimitedLog NO_CONNECT = new RateLimitedLog(LOG, 1);

    private final BrokerServices broker;
    private final String listener;
    private final ConnectHandler connect = new ConnectHandler();
    private final PublishHandler publish = new PublishHandler();
    private final PubAckHandler pubAck = new PubAckHandler();
    private final PubRecHandler pubRec = new PubRecHandler();
    private final PubRelHandler pubRel = new PubRelHandler();
    private final PubCompHandler pubComp = new PubCompHandler();
    private final SubscribeHandler subscribe = new SubscribeHandler();
    private final UnsubscribeHandler unsubscribe = new UnsubscribeHandler();
    private final PingReqHandler pingReq = new PingReqHandler();
    private final DisconnectHandler disconnect = new DisconnectHandler();
    private final AuthHandler auth = new AuthHandler();
    private final ProtocolErrors errors = new ProtocolErrors();

    public PacketDispatcher(BrokerServices broker, String listener) {
        this.broker = broker;
        this.listener = listener;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        Connection c = new Connection(ctx.channel(), broker, listener);
        ctx.channel().attr(Connection.KEY).set(c);
        broker.metrics().connectionOpened(listener);
        // Absolute deadline for CONNECT: bytes trickling in slowly do not extend it.
        ctx.executor().schedule(() -> {
            if (c.state == Connection.State.AWAITING_CONNECT) {
                broker.metrics().connectTimedOut(listener, "connect");
                NO_CONNECT.info("no CONNECT within %s from %s: closed", broker.mqtt().connectTimeout(), ctx.channel().remoteAddress());
                c.close();
            } else if (c.state == Connection.State.AUTHENTICATING) {
                ConnectHandler.notAnsweredInTime(c, listener, broker.mqtt().connectTimeout());
            }
        }, broker.mqtt().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Connection c = Connection.of(ctx.channel());
        if (msg instanceof InvalidPacket invalid) {
            if (c.state != Connection.State.CLOSING) {
                errors.handle(c, invalid);
            }
            return;
        }
        if (!(msg instanceof MqttMessage message)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        try {
            if (message.decoderResult().isFailure()) {
                errors.decoderFailure(c, message);
            } else if (c.state == Connection.State.AUTHENTICATING) {
                c.hold(message);
            } else if (c.state != Connection.State.CLOSING) {
                dispatch(c, message);
            }
        } finally {
            ReferenceCountUtil.release(message);
        }
    }

    private void dispatch(Connection c, MqttMessage message) {
        switch (message.fixedHeader().messageType()) {
            case CONNECT -> connect.handle(c, (MqttConnectMessage) message).thenAccept(ok -> replayHeld(c, ok));
            case PUBLISH -> publish.handle(c, (MqttPublishMessage) message);
            case PUBACK -> pubAck.handle(c, message);
            case PUBREC -> pubRec.handle(c, message);
            case PUBREL -> pubRel.handle(c, message);
            case PUBCOMP -> pubComp.handle(c, message);
            case SUBSCRIBE -> subscribe.handle(c, (MqttSubscribeMessage) message);
            case UNSUBSCRIBE -> unsubscribe.handle(c, (MqttUnsubscribeMessage) message);
            case PINGREQ -> pingReq.handle(c);
            case DISCONNECT -> disconnect.handle(c, message);
            case AUTH -> auth.handle(c);
            default -> c.disconnect(0x82, message.fixedHeader().messageType() + " is never sent by a client");
        }
    }

    private void replayHeld(Connection c, boolean connected) {
        MqttMessage held;
        while ((held = c.nextHeld()) != null) {
            try {
                if (connected && c.state == Connection.State.CONNECTED) {
                    dispatch(c, held);
                }
            } finally {
                ReferenceCountUtil.release(held);
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Connection c = Connection.of(ctx.channel());
        if (c != null) {
            c.closed();
            broker.metrics().connectionClosed(listener);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            Connection c = Connection.of(ctx.channel());
            if (c != null) {
                c.scheduleDrain();
            }
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            Connection c = Connection.of(ctx.channel());
            LOG.debugf("keep alive expired: %s", c);
            c.disconnect(0x8D, "keep alive timeout");
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable tls = causeOfType(cause, javax.net.ssl.SSLException.class);
        if (tls != null) {
            // The client's side of TLS (an old protocol version, a certificate we do not trust): not a bug of ours.
            broker.metrics().tlsFailed();
            ERRORS.info("closing %s: TLS failed: %s", ctx.channel().remoteAddress(), tls.getMessage());
        } else if (causeOfType(cause, IOException.class) != null) {
            LOG.debugf("connection error %s: %s", ctx.channel().remoteAddress(), cause.getMessage());
        } else {
            broker.metrics().internalError(cause);
            ERRORS.info("closing %s after %s: %s", ctx.channel().remoteAddress(), cause.getClass().getSimpleName(),
                    cause.getMessage());
        }
        ctx.close();
    }

    /** {@code cause} or the first of its causes that is a {@code type} (Netty wraps a handler's exceptions in a DecoderException). */
    private static Throwable causeOfType(Throwable cause, Class<? extends Throwable> type) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return t;
            }
        }
        return null;
    }
}
