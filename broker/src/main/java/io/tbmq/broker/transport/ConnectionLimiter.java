package io.tbmq.broker.transport;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import io.tbmq.broker.metrics.BrokerMetrics;

/**
 * First stage of every connection: closes it at once when its listener already holds the maximum
 * or has accepted its rate for now. The rate is a token bucket holding one second's worth, so a
 * reconnecting fleet is let in at a steady pace instead of all authenticating at once.
 */
@ChannelHandler.Sharable
final class ConnectionLimiter extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Logger.getLogger(ConnectionLimiter.class);
    private static final long SECOND = 1_000_000_000L;
    /** Marks a channel refused by rate: it never counted as open. */
    private static final AttributeKey<Boolean> SHED = AttributeKey.valueOf("tbmq.shedByRate");
    private final String listener;
    private volatile int max;
    private volatile int ratePerSecond;
    private final BrokerMetrics metrics;
    private final LongSupplier nanoClock;
    private final AtomicInteger open = new AtomicInteger();
    private double tokens;
    private long refilledAt;

    ConnectionLimiter(String listener, int max, int ratePerSecond, BrokerMetrics metrics, LongSupplier nanoClock) {
        this.listener = listener;
        this.max = max;
        this.ratePerSecond = ratePerSecond;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
        this.tokens = ratePerSecond;
        this.refilledAt = nanoClock.getAsLong();
        metrics.listenerOpened(listener);
    }

    /** A new maximum of open connections: connections already open above it stay, new ones are refused. */
    void maxConnections(int max) {
        this.max = max;
    }

    /** A new rate; the bucket never holds more than one second's worth of it, and starts full when there was no limit. */
    synchronized void maxConnectionRate(int ratePerSecond) {
        int rate = Math.max(ratePerSecond, 0);
        tokens = this.ratePerSecond <= 0 ? rate : Math.min(tokens, rate);
        refilledAt = nanoClock.getAsLong();
        this.ratePerSecond = ratePerSecond;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!admitAtRate()) {
            LOG.debugf("listener %s over its rate of %d connections/s, closing %s", listener, ratePerSecond,
                    ctx.channel().remoteAddress());
            metrics.connectionShed(listener, "rate");
            ctx.channel().attr(SHED).set(Boolean.TRUE);
            ctx.close();
            return;
        }
        if (open.incrementAndGet() > max) {
            LOG.debugf("listener %s at its limit of %d connections, closing %s", listener, max, ctx.channel().remoteAddress());
            metrics.connectionShed(listener, "limit");
            ctx.close();
            return;
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (ctx.channel().attr(SHED).get() == null) {
            open.decrementAndGet();
        }
        ctx.fireChannelInactive();
    }

    private synchronized boolean admitAtRate() {
        if (ratePerSecond <= 0) {
            return true;
        }
        long now = nanoClock.getAsLong();
        tokens = Math.min(ratePerSecond, tokens + (double) (now - refilledAt) * ratePerSecond / SECOND);
        refilledAt = now;
        if (tokens < 1) {
            return false;
        }
        tokens -= 1;
        return true;
    }
}
