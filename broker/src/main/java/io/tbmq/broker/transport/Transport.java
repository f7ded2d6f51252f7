package io.tbmq.broker.transport;

import java.util.concurrent.ThreadFactory;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** Native epoll on Linux when it loads and is wanted, NIO otherwise. */
public record Transport(boolean epoll) {

    public static Transport choose(boolean preferNative) {
        return new Transport(preferNative && Epoll.isAvailable());
    }

    public EventLoopGroup group(int threads, String name) {
        ThreadFactory factory = new DefaultThreadFactory(name, true);
        return epoll ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }

    public Class<? extends ServerChannel> serverChannel() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public String name() {
        return epoll ? "epoll" : "nio";
    }
}
