package io.tbmq.loadgen;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;

/**
 * Publisher/subscriber pairs that keep going through failures, as devices behind a load balancer
 * do: every connection that drops is opened again (persistent subscribers find their sessions),
 * and afterwards each pair tells what its publisher had acknowledged (PUBACK, PUBCOMP) and never
 * arrived, what arrived twice (and whether DUP was set), what arrived out of order, and the
 * longest pause between two arrivals in each named phase of the run, counted in the phase in which
 * its first missing message was due ({@link #phase}).
 */
public final class ContinuousTraffic implements AutoCloseable {
    /** Unacknowledged publishes a publisher may have outstanding; beyond it, it skips a beat. */
    private static final int WINDOW = 256;

    /** What to run. {@code qos} 1 or 2; subscribers are persistent (clean session off, MQTT 3.1.1). */
    public record Settings(String host, int port, String user, String password, int pairs, int qos, double ratePerSecond,
            String name) {
    }

    /**
     * One pair's account. {@code lostMessages} names each message acknowledged and never delivered:
     * its sequence number and the phase it was acknowledged in, where a loss is looked for.
     * {@code skippedBeats} counts publishes not made because the publisher's window was full (the
     * broker acknowledging slower than the publisher's rate, or an acknowledgement that never came).
     * {@code longestPauseFrom} tells when each phase's longest pause began (to find it in the servers'
     * logs), {@code reconnectsIn} how often the pair's connections were opened again in each phase.
     * {@code reorderedIn} counts, per phase it arrived in, each message that came after one with a
     * higher sequence number (a first arrival, not a redelivery); {@code reorderings} names the
     * first few: which sequence number after which, and when. {@code duplicatesIn} counts, per phase
     * it arrived in, each message that had arrived before; {@code duplications} names the first few:
     * which one, how far behind the newest, the phase it was acknowledged in, and when.
     */
    public record PairReport(String name, int qos, int acked, int lost, int duplicates, int duplicatesWithoutDup, int reordered,
            Map<String, Long> longestPauseMillis, int reconnects, List<String> lostMessages, int skippedBeats,
            Map<String, java.time.Instant> longestPauseFrom, Map<String, Integer> reconnectsIn, Map<String, String> longestPauseDetail,
            Map<String, Integer> reorderedIn, List<String> reorderings, Map<String, Integer> duplicatesIn, List<String> duplications) {
    }

    private final Settings settings;
    private final EventLoopGroup group = new NioEventLoopGroup(2);
    private final List<Pair> pairs = new ArrayList<>();
    private volatile String phase = "start";
    /** Every phase by the {@link System#nanoTime()} it began at. */
    private final java.util.NavigableMap<Long, String> phases = new java.util.concurrent.ConcurrentSkipListMap<>(
            Map.of(Long.MIN_VALUE, "start"));
    private volatile boolean publishing = true;
    private volatile boolean closing;

    private ContinuousTraffic(Settings settings) {
        this.settings = settings;
    }

    /** Connects every subscriber (and subscribes it), then starts the publishers. */
    public static ContinuousTraffic start(Settings settings) throws InterruptedException {
        ContinuousTraffic t = new ContinuousTraffic(settings);
        for (int i = 0; i < settings.pairs(); i++) {
            t.pairs.add(t.new Pair(i));
        }
        for (Pair p : t.pairs) {
            p.subscriber.connect();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (t.pairs.stream().anyMatch(p -> !p.subscriber.subscribed) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        if (t.pairs.stream().anyMatch(p -> !p.subscriber.subscribed)) {
            t.close();
            throw new IllegalStateException(settings.name() + ": subscribers could not subscribe at " + settings.host() + ":"
                    + settings.port());
        }
        for (Pair p : t.pairs) {
            p.publisher.connect();
        }
        return t;
    }

    /**
     * From now on, pauses are counted for {@code name}: a pause belongs to the phase in which the
     * first message that did not come was due (a publish period after the last arrival), so the
     * step that caused it is the one it began in, also when the last message before it arrived a
     * few milliseconds before the step began.
     */
    public void phase(String name) {
        phases.put(System.nanoTime(), name);
        this.phase = name;
    }

    private String phaseAt(long nanos) {
        return phases.floorEntry(nanos).getValue();
    }

    /**
     * The pairs whose subscriber has had no message since {@code nanoTime} (a {@link System#nanoTime()}
     * reading): those a step left cut off, when asked a while after it ended.
     */
    public List<String> silentSince(long nanoTime) {
        List<String> silent = new ArrayList<>();
        for (Pair p : pairs) {
            synchronized (p) {
                if (p.lastArrival - nanoTime < 0) {
                    silent.add(settings.name() + "-" + p.index);
                }
            }
        }
        return silent;
    }

    /** Stops publishing, waits until every acknowledged message arrived (or {@code drain} passed), and reports. */
    public List<PairReport> finish(Duration drain) throws InterruptedException {
        publishing = false;
        Thread.sleep(1_000); // acknowledgements of the last publishes
        long deadline = System.nanoTime() + drain.toNanos();
        while (System.nanoTime() < deadline && pairs.stream().anyMatch(p -> p.lost() > 0)) {
            Thread.sleep(200);
        }
        List<PairReport> out = new ArrayList<>();
        for (Pair p : pairs) {
            out.add(p.report());
        }
        close();
        return out;
    }

    @Override
    public void close() {
        closing = true;
        for (Pair p : pairs) {
            p.publisher.close();
            p.subscriber.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** A publisher and its subscriber, topic {@code continuous/<name>/<i>/x}. */
    private final class Pair {
        final int index;
        final String topic;
        final Publisher publisher;
        final Subscriber subscriber;
        final BitSet acked = new BitSet();
        final BitSet received = new BitSet();
        final Map<String, Long> longestPause = new LinkedHashMap<>();
        final Map<String, java.time.Instant> longestPauseFrom = new LinkedHashMap<>();
        /** What the publisher got acknowledged during each phase's longest pause and what ended it: where the messages waited. */
        final Map<String, String> longestPauseDetail = new LinkedHashMap<>();
        int ackedSinceArrival;
        final Map<String, Integer> reconnectsIn = new LinkedHashMap<>();
        /** The phase each message was acknowledged in, by sequence number. */
        final Map<Integer, String> ackedIn = new java.util.HashMap<>();
        int duplicates;
        int duplicatesWithoutDup;
        /** The highest sequence number that has arrived. */
        long highest = -1;
        final Map<String, Integer> reorderedIn = new LinkedHashMap<>();
        final List<String> reorderings = new ArrayList<>();
        final Map<String, Integer> duplicatesIn = new LinkedHashMap<>();
        final List<String> duplications = new ArrayList<>();
        long lastArrival;
        long lastArrivalWallMillis;

        Pair(int index) {
            this.index = index;
            this.topic = "continuous/" + settings.name() + "/" + index + "/x";
            this.publisher = new Publisher(this);
            this.subscriber = new Subscriber(this);
        }

        synchronized void reconnecting() {
            reconnectsIn.merge(phase, 1, Integer::sum);
        }

        synchronized void acknowledged(long seq) {
            acked.set((int) seq);
            ackedIn.put((int) seq, phase);
            ackedSinceArrival++;
        }

        synchronized void arrived(long seq, boolean dup) {
            long now = System.nanoTime();
            if (lastArrival != 0) {
                long pause = TimeUnit.NANOSECONDS.toMillis(now - lastArrival);
                String pausePhase = phaseAt(lastArrival + (long) (1_000_000_000L / settings.ratePerSecond()));
                if (pause > longestPause.getOrDefault(pausePhase, -1L)) {
                    longestPause.put(pausePhase, pause);
                    longestPauseFrom.put(pausePhase, java.time.Instant.ofEpochMilli(lastArrivalWallMillis));
                    longestPauseDetail.put(pausePhase, ackedSinceArrival + " acknowledged meanwhile, ended by seq " + seq
                            + (dup ? " (DUP)" : "") + (received.get((int) seq) ? ", a duplicate" : ""));
                }
            }
            lastArrival = now;
            lastArrivalWallMillis = System.currentTimeMillis();
            ackedSinceArrival = 0;
            if (received.get((int) seq)) {
                duplicates++;
                if (!dup) {
                    duplicatesWithoutDup++;
                }
                String arrivalPhase = phaseAt(now);
                duplicatesIn.merge(arrivalPhase, 1, Integer::sum);
                if (duplications.size() < 3) {
                    duplications.add("seq " + seq + " again, " + (highest - seq) + " behind the newest, at "
                            + java.time.Instant.ofEpochMilli(lastArrivalWallMillis) + " during '" + arrivalPhase + "' ("
                            + (ackedIn.containsKey((int) seq) ? "acknowledged during '" + ackedIn.get((int) seq) + "'" : "not acknowledged yet")
                            + ")" + (dup ? " (DUP)" : ""));
                }
                return;
            }
            received.set((int) seq);
            if (seq < highest) {
                String arrivalPhase = phaseAt(now);
                reorderedIn.merge(arrivalPhase, 1, Integer::sum);
                if (reorderings.size() < 10) {
                    reorderings.add("seq " + seq + " after " + highest + " at " + java.time.Instant.ofEpochMilli(lastArrivalWallMillis)
                            + " during '" + arrivalPhase + "'" + (dup ? " (DUP)" : ""));
                }
            }
            highest = Math.max(highest, seq);
        }

        synchronized int lost() {
            BitSet missing = (BitSet) acked.clone();
            missing.andNot(received);
            return missing.cardinality();
        }

        synchronized PairReport report() {
            int reordered = reorderedIn.values().stream().mapToInt(Integer::intValue).sum();
            BitSet missing = (BitSet) acked.clone();
            missing.andNot(received);
            List<String> lostMessages = missing.stream().mapToObj(seq -> "seq " + seq + " acknowledged during '" + ackedIn.get(seq) + "'")
                    .toList();
            return new PairReport(settings.name() + "-" + index, settings.qos(), acked.cardinality(), lost(), duplicates,
                    duplicatesWithoutDup, reordered, new LinkedHashMap<>(longestPause), publisher.reconnects + subscriber.reconnects,
                    lostMessages, publisher.skippedBeats, new LinkedHashMap<>(longestPauseFrom), new LinkedHashMap<>(reconnectsIn),
                    new LinkedHashMap<>(longestPauseDetail), new LinkedHashMap<>(reorderedIn), List.copyOf(reorderings),
                    new LinkedHashMap<>(duplicatesIn), List.copyOf(duplications));
        }
    }

    /** One MQTT connection that is opened again whenever it drops. */
    private abstract class Endpoint extends ChannelInboundHandlerAdapter {
        final Pair pair;
        final String clientId;
        Channel channel;
        int reconnects;
        private EventLoop loop;

        Endpoint(Pair pair, String role) {
            this.pair = pair;
            this.clientId = "ct-" + settings.name() + "-" + role + "-" + pair.index;
        }

        void connect() {
            if (closing) {
                return;
            }
            // A reconnect stays on the connection's event loop, so its state is still touched by one thread.
            Bootstrap b = new Bootstrap().group(loop != null ? loop : group).channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true).option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 3_000)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(MqttEncoder.INSTANCE, new MqttDecoder(1 << 20), Endpoint.this);
                        }
                    });
            b.connect(settings.host(), settings.port()).addListener(f -> {
                if (!f.isSuccess()) {
                    retry();
                }
            });
        }

        void retry() {
            if (!closing) {
                reconnects++;
                pair.reconnecting();
                group.schedule(() -> {
                    try {
                        connect();
                    } catch (RuntimeException e) {
                        retry(); // never give up on a connection: that would look like lost messages
                    }
                }, 500 + ThreadLocalRandom.current().nextInt(500), TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public boolean isSharable() {
            return true;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            loop = channel.eventLoop();
            channel.attr(io.netty.util.AttributeKey.<MqttVersion>valueOf("NETTY_CODEC_MQTT_VERSION")).set(MqttVersion.MQTT_3_1_1);
            var connect = MqttMessageBuilders.connect().protocolVersion(MqttVersion.MQTT_3_1_1).clientId(clientId)
                    .cleanSession(cleanSession()).keepAlive(30);
            if (settings.user() != null) {
                connect.hasUser(true).username(settings.user());
            }
            if (settings.password() != null) {
                connect.hasPassword(true).password(settings.password().getBytes(StandardCharsets.UTF_8));
            }
            ctx.writeAndFlush(connect.build());
        }

        abstract boolean cleanSession();

        abstract void connected(ChannelHandlerContext ctx, boolean sessionPresent);

        abstract void read(ChannelHandlerContext ctx, MqttMessage m);

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (!(msg instanceof MqttMessage m) || m.decoderResult().isFailure()) {
                    ctx.close();
                    return;
                }
                if (m.fixedHeader().messageType() == MqttMessageType.CONNACK) {
                    MqttConnAckMessage ack = (MqttConnAckMessage) m;
                    if (ack.variableHeader().connectReturnCode() != MqttConnectReturnCode.CONNECTION_ACCEPTED) {
                        ctx.close();
                        return;
                    }
                    connected(ctx, ack.variableHeader().isSessionPresent());
                    return;
                }
                read(ctx, m);
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            disconnected();
            retry();
        }

        void disconnected() {
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        void close() {
            Channel c = channel;
            if (c != null) {
                c.close();
            }
        }
    }

    private final class Publisher extends Endpoint {
        private final long[] inflightSeq = new long[WINDOW + 1];
        private final boolean[] inflight = new boolean[WINDOW + 1];
        private int nextPacketId = 1;
        private long sequence;
        volatile int skippedBeats;
        private io.netty.util.concurrent.ScheduledFuture<?> schedule;

        Publisher(Pair pair) {
            super(pair, "pub");
        }

        @Override
        boolean cleanSession() {
            return true;
        }

        @Override
        void connected(ChannelHandlerContext ctx, boolean sessionPresent) {
            java.util.Arrays.fill(inflight, false);
            long period = (long) (1_000_000_000L / settings.ratePerSecond());
            schedule = ctx.channel().eventLoop().scheduleAtFixedRate(() -> publish(ctx), ThreadLocalRandom.current().nextLong(period),
                    period, TimeUnit.NANOSECONDS);
        }

        private void publish(ChannelHandlerContext ctx) {
            if (!publishing || !ctx.channel().isActive()) {
                return;
            }
            if (inflight[nextPacketId]) {
                skippedBeats++;
                return;
            }
            long seq = sequence++;
            int packetId = nextPacketId;
            nextPacketId = nextPacketId == WINDOW ? 1 : nextPacketId + 1;
            inflight[packetId] = true;
            inflightSeq[packetId] = seq;
            ByteBuf payload = ctx.alloc().buffer(Payload.HEADER);
            Payload.write(payload, System.nanoTime(), seq, pair.index, Payload.HEADER);
            ctx.writeAndFlush(new MqttPublishMessage(new MqttFixedHeader(MqttMessageType.PUBLISH, false, MqttQoS.valueOf(settings.qos()),
                    false, 0), new MqttPublishVariableHeader(pair.topic, packetId), payload), ctx.voidPromise());
        }

        @Override
        void read(ChannelHandlerContext ctx, MqttMessage m) {
            switch (m.fixedHeader().messageType()) {
                case PUBACK, PUBCOMP -> {
                    int id = ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
                    if (id > 0 && id <= WINDOW && inflight[id]) {
                        inflight[id] = false;
                        pair.acknowledged(inflightSeq[id]);
                    }
                }
                case PUBREC -> {
                    int id = ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
                    ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PUBREL, false, MqttQoS.AT_LEAST_ONCE, false, 0),
                            MqttMessageIdVariableHeader.from(id)), ctx.voidPromise());
                }
                default -> {
                }
            }
        }

        @Override
        void disconnected() {
            // Unacknowledged publishes of the dropped connection are not counted: the broker never said it had them.
            if (schedule != null) {
                schedule.cancel(false);
            }
        }
    }

    private final class Subscriber extends Endpoint {
        volatile boolean subscribed;

        Subscriber(Pair pair) {
            super(pair, "sub");
        }

        @Override
        boolean cleanSession() {
            return false;
        }

        @Override
        void connected(ChannelHandlerContext ctx, boolean sessionPresent) {
            if (!sessionPresent) {
                ctx.writeAndFlush(MqttMessageBuilders.subscribe().messageId(1)
                        .addSubscription(MqttQoS.valueOf(settings.qos()), "continuous/" + settings.name() + "/" + pair.index + "/+")
                        .build());
            } else {
                subscribed = true;
            }
        }

        @Override
        void read(ChannelHandlerContext ctx, MqttMessage m) {
            switch (m.fixedHeader().messageType()) {
                case SUBACK -> subscribed = true;
                case PUBLISH -> {
                    MqttPublishMessage p = (MqttPublishMessage) m;
                    if (p.payload().readableBytes() >= Payload.HEADER) {
                        pair.arrived(Payload.sequence(p.payload()), p.fixedHeader().isDup());
                    }
                    int id = p.variableHeader().packetId();
                    MqttMessageType reply = p.fixedHeader().qosLevel() == MqttQoS.EXACTLY_ONCE ? MqttMessageType.PUBREC
                            : p.fixedHeader().qosLevel() == MqttQoS.AT_LEAST_ONCE ? MqttMessageType.PUBACK : null;
                    if (reply != null) {
                        ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(reply, false, MqttQoS.AT_MOST_ONCE, false, 0),
                                MqttMessageIdVariableHeader.from(id)), ctx.voidPromise());
                    }
                }
                case PUBREL -> {
                    int id = ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
                    ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PUBCOMP, false, MqttQoS.AT_MOST_ONCE, false, 0),
                            MqttMessageIdVariableHeader.from(id)), ctx.voidPromise());
                }
                default -> {
                }
            }
        }
    }
}
