package io.tbmq.broker.transport;

import java.util.concurrent.ThreadFactory;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.incubator.channel.uring.IOUring;
import io.netty.incubator.channel.uring.IOUringEventLoopGroup;
import io.netty.incubator.channel.uring.IOUringServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The listeners' I/O: io_uring when wanted and the kernel allows it (container runtimes' default seccomp
 * profiles refuse it), native epoll on Linux otherwise, NIO where neither loads.
 */
public enum Transport {
    IO_URING("io_uring"),
    EPOLL("epoll"),
    NIO("nio");

    private final String label;

    Transport(String label) {
        this.label = label;
    }

    public static Transport choose(boolean preferNative, boolean preferIoUring) {
        return choose(preferNative, preferIoUring, IOUring.isAvailable(), Epoll.isAvailable());
    }

    static Transport choose(boolean preferNative, boolean preferIoUring, boolean ioUringLoads, boolean epollLoads) {
        if (!preferNative) {
            return NIO;
        }
        if (preferIoUring && ioUringLoads) {
            return IO_URING;
        }
        return epollLoads ? EPOLL : NIO;
    }

    /** Why io_uring was not taken, for the start-up log line; null when it was or was not wanted. */
    public static String ioUringRefusal(boolean preferNative, boolean preferIoUring) {
        if (!preferNative || !preferIoUring || IOUring.isAvailable()) {
            return null;
        }
        Throwable cause = IOUring.unavailabilityCause();
        return cause == null ? "unavailable" : String.valueOf(cause.getMessage());
    }

    public EventLoopGroup group(int threads, String name) {
        ThreadFactory factory = new DefaultThreadFactory(name, true);
        return switch (this) {
            case IO_URING -> new IOUringEventLoopGroup(threads, factory);
            case EPOLL -> new EpollEventLoopGroup(threads, factory);
            case NIO -> new NioEventLoopGroup(threads, factory);
        };
    }

    public Class<? extends ServerChannel> serverChannel() {
        return switch (this) {
            case IO_URING -> IOUringServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
        };
    }

    /** As the start-up log line and the docs spell it. */
    public String label() {
        return label;
    }
}
