package io.tbmq.loadgen;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.HdrHistogram.Histogram;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;

/**
 * The benchmark load generator: the TBMQ paper's point-to-point test (N publisher/subscriber pairs,
 * publisher n on {@code europe/ua/kyiv/n/x}, subscriber n on {@code europe/ua/kyiv/n/+}, a fixed
 * rate per publisher, persistent QoS 1 subscribers) or a 1-to-N fan-out. Prints
 * {@code MEASURE-START}/{@code MEASURE-END} around the measurement window (so an outside
 * observer can sample CPU exactly then) and a JSON result.
 */
public final class LoadgenMain {
    private LoadgenMain() {
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        Stats stats = new Stats(o.publishers(), o.pairs());
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = epoll ? new EpollEventLoopGroup(2) : new NioEventLoopGroup(2);
        try {
            run(o, stats, group, epoll);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static void run(Options o, Stats stats, EventLoopGroup group, boolean epoll) throws Exception {
        List<Client> subscribers = connect(o, group, epoll, o.pairs(), i -> new Client("lg-" + o.runId() + "-sub-" + i, o, stats, i),
                o::subscriberPort);
        List<CompletableFuture<Void>> subacks = new ArrayList<>();
        for (int i = 0; i < subscribers.size(); i++) {
            Client s = subscribers.get(i);
            String filter = o.subscribeFilter(i);
            s.channel().eventLoop().execute(() -> s.subscribe(filter));
            subacks.add(s.subscribed());
        }
        CompletableFuture.allOf(subacks.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        List<Client> publishers = connect(o, group, epoll, o.publishers(), i -> new Client("lg-" + o.runId() + "-pub-" + i, o, stats, i),
                o::publisherPort);

        long periodNanos = (long) (1_000_000_000L / o.rate());
        List<ScheduledFuture<?>> schedules = new ArrayList<>();
        for (int i = 0; i < publishers.size(); i++) {
            Client p = publishers.get(i);
            String topic = o.publishTopic(i);
            long phase = ThreadLocalRandom.current().nextLong(periodNanos);
            schedules.add(p.channel().eventLoop().scheduleAtFixedRate(() -> p.publishNext(topic), phase, periodNanos,
                    TimeUnit.NANOSECONDS));
        }
        TimeUnit.SECONDS.sleep(o.warmup());
        stats.windowStart = System.nanoTime();
        System.out.println("MEASURE-START");
        System.out.flush();
        TimeUnit.SECONDS.sleep(o.duration());
        stats.windowEnd = System.nanoTime();
        System.out.println("MEASURE-END");
        System.out.flush();
        schedules.forEach(s -> s.cancel(false));
        drain(o, stats, subscribers);
        // A task on every event loop makes all their writes to Stats visible here.
        for (Client c : subscribers) {
            c.channel().eventLoop().submit(() -> { }).get(10, TimeUnit.SECONDS);
        }
        for (Client c : publishers) {
            c.channel().eventLoop().submit(() -> { }).get(10, TimeUnit.SECONDS);
        }
        String json = report(o, stats);
        System.out.println(json);
        if (o.json() != null) {
            Files.writeString(Path.of(o.json()), json + "\n");
        }
        for (Client c : subscribers) {
            c.channel().close();
        }
        for (Client c : publishers) {
            c.channel().close();
        }
    }

    private static void drain(Options o, Stats stats, List<Client> subscribers) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.drain());
        long expected = o.fanout() ? stats.ackedInWindow.sum() * o.pairs() : stats.ackedInWindow.sum();
        while (System.nanoTime() < deadline && stats.receivedInWindow.sum() < expected) {
            TimeUnit.MILLISECONDS.sleep(100);
        }
        TimeUnit.MILLISECONDS.sleep(300);
    }

    private static List<Client> connect(Options o, EventLoopGroup group, boolean epoll, int count, IntFunction<Client> factory,
            java.util.function.IntUnaryOperator port) throws Exception {
        List<Client> clients = new ArrayList<>(count);
        Bootstrap b = new Bootstrap().group(group).channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true).option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000);
        for (int start = 0; start < count; start += 200) {
            List<CompletableFuture<Void>> batch = new ArrayList<>();
            for (int i = start; i < Math.min(count, start + 200); i++) {
                Client client = factory.apply(i);
                b.clone().handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new MqttDecoder(1 << 20), MqttEncoder.INSTANCE, client);
                    }
                }).connect(o.host(), port.applyAsInt(i)).addListener(f -> {
                    if (!f.isSuccess()) {
                        client.connected().completeExceptionally(f.cause());
                    }
                });
                clients.add(client);
                batch.add(client.connected());
            }
            CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
        return clients;
    }

    private static String report(Options o, Stats s) {
        double seconds = (s.windowEnd - s.windowStart) / 1e9;
        long lost = 0;
        long maxGap = 0;
        for (int stream = 0; stream < o.pairs(); stream++) {
            lost += s.lost(stream, o.fanout() ? 0 : stream);
            maxGap = Math.max(maxGap, s.maxGap[stream]);
        }
        double in = s.ackedInWindow.sum() / seconds;
        double out = s.receivedInWindow.sum() / seconds;
        return String.format(Locale.ROOT, "{\"scenario\":\"%s\",\"qos\":%d,\"pairs\":%d,\"ratePerPublisher\":%s,"
                + "\"payload\":%d,\"persistent\":%b,\"seconds\":%.1f,\"inPerSec\":%.0f,\"outPerSec\":%.0f,\"inOutPerSec\":%.0f,"
                + "\"sent\":%d,\"acked\":%d,\"received\":%d,\"lost\":%d,\"duplicates\":%d,\"duplicatesWithoutDup\":%d,"
                + "\"reordered\":%d,\"ackErrors\":%d,\"skippedBackpressure\":%d,\"maxPauseMs\":%.1f,"
                + "\"e2eMicros\":%s,\"pubAckMicros\":%s}",
                o.scenario(), o.qos(), o.pairs(), o.rate(), o.payload(), o.persistent(), seconds, in, out, in + out,
                s.sentInWindow.sum(), s.ackedInWindow.sum(), s.receivedInWindow.sum(), lost, s.duplicates.sum(),
                s.duplicatesWithoutDup.sum(), s.reordered.sum(), s.ackErrors.sum(), s.skippedBackpressure.sum(),
                maxGap / 1e6, histogram(s.endToEnd), histogram(s.publishAck));
    }

    private static String histogram(Histogram h) {
        if (h.getTotalCount() == 0) {
            return "null";
        }
        return String.format(Locale.ROOT, "{\"avg\":%.0f,\"p50\":%d,\"p95\":%d,\"p99\":%d,\"max\":%d}", h.getMean(),
                h.getValueAtPercentile(50), h.getValueAtPercentile(95), h.getValueAtPercentile(99), h.getMaxValue());
    }
}
