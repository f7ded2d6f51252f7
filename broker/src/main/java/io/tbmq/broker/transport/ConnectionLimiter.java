package io.tbmq.broker.transport;

import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** First stage of every connection: closes it at once when its listener already holds the maximum. */
@ChannelHandler.Sharable
final class ConnectionLimiter extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Logger.getLogger(ConnectionLimiter.class);
    private final String listener;
    private final int max;
    private final AtomicInteger open = new AtomicInteger();

    ConnectionLimiter(String listener, int max) {
        this.listener = listener;
        this.max = max;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (open.incrementAndGet() > max) {
            LOG.debugf("listener %s at its limit of %d connections, closing %s", listener, max, ctx.channel().remoteAddress());
            ctx.close();
            return;
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        open.decrementAndGet();
        ctx.fireChannelInactive();
    }
}
