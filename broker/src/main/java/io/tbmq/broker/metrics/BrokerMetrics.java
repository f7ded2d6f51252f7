package io.tbmq.broker.metrics;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * The broker's Prometheus metrics ({@code /q/metrics}): connections, messages and bytes in and
 * out per QoS, Kafka produce latency, delivery latency, drops and refusals. Hot-path counters are
 * created once and kept in arrays.
 */
public final class BrokerMetrics {
    private final MeterRegistry registry;
    private final Counter[] messagesIn = new Counter[3];
    private final Counter[] messagesOut = new Counter[3];
    private final Counter bytesIn;
    private final Counter bytesOut;
    private final Counter routed;
    private final Counter publishFailed;
    private final Counter retainedRefused;
    private final Counter tlsFailed;
    private final Counter movesInOrder;
    private final Counter movesBounded;
    private final Timer produceLatency;
    private final Timer deliveryLatency;
    private final Timer liveDeliveryLatency;
    private final ConcurrentHashMap<String, AtomicInteger> connections = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> drops = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> violations = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> reloads = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicInteger> reloadRefused = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> publishRefusals = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> refusedConnects = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> internalErrors = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> shed = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> connectTimeouts = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, ScriptMeters> scripts = new ConcurrentHashMap<>();

    /** A script's meters, registered together so the error count reads 0 rather than missing. */
    private record ScriptMeters(Timer latency, Counter errors) {
    }

    /** Every reason a message is dropped for, exported from the start so a rate over them is 0, not absent. */
    public static final java.util.List<String> DROP_REASONS = java.util.List.of("queue-full", "qos0-offline", "expired",
            "too-large-for-client", "session-gone", "session-moved");

    /** The refusals a secured broker sees first (v5 0x86 bad user name or password, 0x87 not authorized), exported from the start. */
    private static final int[] USUAL_REFUSALS = {0x86, 0x87};

    /**
     * The DEVICE store's Lua scripts, whose meters are exported from the start: an alert on the rate
     * of errors (config/monitoring/tbmq-alerts.yaml) cannot see a counter that first appears at 1.
     */
    public static final java.util.List<String> REDIS_SCRIPTS = java.util.List.of("add", "load", "remove", "release", "delivered",
            "clear");

    /** The files a broker applies without a restart, whose reload counts are exported from the start for the same reason. */
    public static final java.util.List<String> RELOADED_FILES = java.util.List.of("credentials", "tls");

    /** Why a PUBLISH is refused before it is routed ({@link #publishRefused}), each exported from the start. */
    public static final java.util.List<String> PUBLISH_REFUSALS = java.util.List.of("store-down", "not-authorized", "topic-invalid");

    /** Why a listener closes a connection right after accept ({@link #connectionShed}). */
    public static final java.util.List<String> SHED_REASONS = java.util.List.of("limit", "rate");

    private final MultiGauge redisMemoryUsed;
    private final MultiGauge redisMemoryMax;
    private final MultiGauge redisMemoryEvicting;
    private final java.util.Map<String, AtomicLong> redisMemoryEvictingNow = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<String, AtomicLong> redisMemoryUsedNow = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<String, AtomicLong> redisMemoryMaxNow = new java.util.concurrent.ConcurrentHashMap<>();

    public BrokerMetrics(MeterRegistry registry) {
        this.registry = registry;
        DROP_REASONS.forEach(this::dropCounter);
        for (int code : USUAL_REFUSALS) {
            refusedConnectCounter(code);
        }
        REDIS_SCRIPTS.forEach(this::scriptMeters);
        for (String what : RELOADED_FILES) {
            reloadCounter(what, true);
            reloadCounter(what, false);
            reloadRefusedGauge(what);
        }
        PUBLISH_REFUSALS.forEach(this::publishRefusalCounter);
        for (int q = 0; q < 3; q++) {
            messagesIn[q] = Counter.builder("tbmq.messages.in").tag("qos", Integer.toString(q))
                    .description("PUBLISH packets received from clients").register(registry);
            messagesOut[q] = Counter.builder("tbmq.messages.out").tag("qos", Integer.toString(q))
                    .description("PUBLISH packets sent to clients").register(registry);
        }
        movesInOrder = Counter.builder("tbmq.partition.moves").tag("result", "in-order")
                .description("growths of tbmq.msg.all this node followed, every moving topic kept in order").register(registry);
        movesBounded = Counter.builder("tbmq.partition.moves").tag("result", "bounded")
                .description("growths of tbmq.msg.all where topics went on at a bound (partition-move-wait, memory, shutdown)")
                .register(registry);
        redisMemoryUsed = MultiGauge.builder("tbmq.redis.memory.used.bytes")
                .description("memory a Redis master uses, as it counts it against its maxmemory (INFO memory)").register(registry);
        redisMemoryMax = MultiGauge.builder("tbmq.redis.memory.max.bytes")
                .description("a Redis master's maxmemory (0: none)").register(registry);
        redisMemoryEvicting = MultiGauge.builder("tbmq.redis.memory.evicting")
                .description("1 when a Redis master drops keys once full (a maxmemory-policy other than noeviction): stored messages would be lost silently")
                .register(registry);
        bytesIn = Counter.builder("tbmq.bytes.in").description("payload bytes received").register(registry);
        bytesOut = Counter.builder("tbmq.bytes.out").description("payload bytes sent").register(registry);
        routed = Counter.builder("tbmq.messages.routed").description("subscriber copies made by routing").register(registry);
        publishFailed = Counter.builder("tbmq.publish.failed").description("PUBLISHes the message log did not accept").register(registry);
        retainedRefused = Counter.builder("tbmq.retained.refused").description("retained messages not stored: store full").register(registry);
        tlsFailed = Counter.builder("tbmq.connections.tls.failed")
                .description("connections closed because TLS failed on the client's side (protocol version, certificate)").register(registry);
        // Histogram buckets only: Prometheus computes quantiles; client-side percentiles cost CPU per message.
        produceLatency = Timer.builder("tbmq.kafka.produce.latency").description("PUBLISH received to Kafka acknowledged")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
        deliveryLatency = Timer.builder("tbmq.delivery.latency").description("PUBLISH received to written to a subscriber")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
        // The series to alert on: without offline backlogs and retained messages, whose age is no delay.
        liveDeliveryLatency = Timer.builder("tbmq.live.delivery.latency")
                .description("PUBLISH received to written to a subscriber that was connected when it was received (RETAIN not set)")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
    }

    /**
     * Each Redis master's memory as it last answered, by its address (masters that left drop out).
     * Rows are registered again only when the masters change: a re-registration removes them for a moment.
     */
    public void redisMemory(java.util.Map<String, Long> usedBytes, java.util.Map<String, Long> maxBytes,
            java.util.Map<String, Boolean> evicting) {
        boolean changed = !usedBytes.keySet().equals(redisMemoryUsedNow.keySet()) || !maxBytes.keySet().equals(redisMemoryMaxNow.keySet())
                || !evicting.keySet().equals(redisMemoryEvictingNow.keySet());
        redisMemoryUsedNow.keySet().retainAll(usedBytes.keySet());
        redisMemoryMaxNow.keySet().retainAll(maxBytes.keySet());
        redisMemoryEvictingNow.keySet().retainAll(evicting.keySet());
        usedBytes.forEach((master, v) -> redisMemoryUsedNow.computeIfAbsent(master, m -> new AtomicLong()).set(v));
        maxBytes.forEach((master, v) -> redisMemoryMaxNow.computeIfAbsent(master, m -> new AtomicLong()).set(v));
        evicting.forEach((master, v) -> redisMemoryEvictingNow.computeIfAbsent(master, m -> new AtomicLong()).set(v ? 1 : 0));
        if (changed) {
            redisMemoryUsed.register(rows(redisMemoryUsedNow), true);
            redisMemoryMax.register(rows(redisMemoryMaxNow), true);
            redisMemoryEvicting.register(rows(redisMemoryEvictingNow), true);
        }
    }

    private static java.util.List<MultiGauge.Row<?>> rows(java.util.Map<String, AtomicLong> byMaster) {
        return byMaster.entrySet().stream()
                .<MultiGauge.Row<?>>map(e -> MultiGauge.Row.of(Tags.of("master", e.getKey()), e.getValue(), AtomicLong::get))
                .toList();
    }

    /** A growth of tbmq.msg.all followed: every moving topic in order, or some let go at a bound. */
    public void partitionMoved(boolean inOrder) {
        (inOrder ? movesInOrder : movesBounded).increment();
    }

    public void gauge(String name, String description, Supplier<Number> value) {
        Gauge.builder(name, value).description(description).register(registry);
    }

    /** A gauge with one tag, such as a per-topic value. */
    public void gauge(String name, String description, String tag, String tagValue, Supplier<Number> value) {
        Gauge.builder(name, value).description(description).tag(tag, tagValue).register(registry);
    }

    /** One Lua script call on Redis: its latency, and whether it failed (a timeout, a connection loss, a script error). */
    public void redisScript(String script, long nanos, boolean failed) {
        ScriptMeters meters = scriptMeters(script);
        meters.latency().record(nanos, TimeUnit.NANOSECONDS);
        if (failed) {
            meters.errors().increment();
        }
    }

    private ScriptMeters scriptMeters(String script) {
        return scripts.computeIfAbsent(script, s -> new ScriptMeters(
                Timer.builder("tbmq.redis.script.latency").tag("script", s)
                        .description("a Lua script call on Redis, issued to answered (includes the Lettuce batch wait)")
                        .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100_000))
                        .maximumExpectedValue(Duration.ofSeconds(30)).register(registry),
                Counter.builder("tbmq.redis.script.errors").tag("script", s).description("Lua script calls on Redis that failed")
                        .register(registry)));
    }

    public void connectionOpened(String listener) {
        connections.computeIfAbsent(listener, l -> {
            AtomicInteger count = new AtomicInteger();
            Gauge.builder("tbmq.connections", count, AtomicInteger::get).tag("listener", l)
                    .description("open network connections").register(registry);
            return count;
        }).incrementAndGet();
    }

    public void connectionClosed(String listener) {
        AtomicInteger count = connections.get(listener);
        if (count != null) {
            count.decrementAndGet();
        }
    }

    public int connections(String listener) {
        AtomicInteger count = connections.get(listener);
        return count == null ? 0 : count.get();
    }

    public void messageIn(int qos, int payloadBytes) {
        messagesIn[qos].increment();
        bytesIn.increment(payloadBytes);
    }

    /**
     * A PUBLISH written to a client: {@code latencyMicros} since the broker received it, -1 for a
     * resend; {@code live} when the subscriber was connected at that moment and it is no retained copy.
     */
    public void messageOut(int qos, int payloadBytes, long latencyMicros, boolean live) {
        messagesOut[qos].increment();
        bytesOut.increment(payloadBytes);
        if (latencyMicros >= 0) {
            deliveryLatency.record(latencyMicros, TimeUnit.MICROSECONDS);
            if (live) {
                liveDeliveryLatency.record(latencyMicros, TimeUnit.MICROSECONDS);
            }
        }
    }

    public void produced(long nanos) {
        produceLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void publishFailed() {
        publishFailed.increment();
    }

    public void routed(int copies) {
        if (copies > 0) {
            routed.increment(copies);
        }
    }

    /** A TLS handshake or record failed: the client's doing, not a broker bug ({@link #internalError}). */
    public void tlsFailed() {
        tlsFailed.increment();
    }

    public void retainedRefused() {
        retainedRefused.increment();
    }

    public void dropped(String reason) {
        dropCounter(reason).increment();
    }

    private Counter dropCounter(String reason) {
        return drops.computeIfAbsent(reason, r -> Counter.builder("tbmq.messages.dropped").tag("reason", r)
                .description("messages a session could not keep").register(registry));
    }

    /** A watched file (credentials, TLS) changed: {@code applied} false when it was refused and the old one stays. */
    public void reloaded(String what, boolean applied) {
        // The state first: whoever sees the count move reads the gauge that goes with it.
        reloadRefusedGauge(what).set(applied ? 0 : 1);
        reloadCounter(what, applied).increment();
    }

    /** 1 while the last change of the file was refused: the alert stays on until a valid file is applied. */
    private AtomicInteger reloadRefusedGauge(String what) {
        return reloadRefused.computeIfAbsent(what, w -> {
            AtomicInteger refused = new AtomicInteger();
            Gauge.builder("tbmq.reload.refused", refused, AtomicInteger::get).tag("what", w)
                    .description("1 while the last change of this file was refused and the previous one is in force").register(registry);
            return refused;
        });
    }

    /** A PUBLISH refused before routing ({@link #PUBLISH_REFUSALS}); QoS 1/2 publishers hear so, QoS 0 ones do not. */
    public void publishRefused(String reason) {
        publishRefusalCounter(reason).increment();
    }

    private Counter publishRefusalCounter(String reason) {
        return publishRefusals.computeIfAbsent(reason, r -> Counter.builder("tbmq.publish.refused").tag("reason", r)
                .description("PUBLISHes refused before routing").register(registry));
    }

    private Counter reloadCounter(String what, boolean applied) {
        return reloads.computeIfAbsent(what + (applied ? "/applied" : "/refused"), k -> Counter.builder("tbmq.reloads")
                .tag("what", what).tag("result", applied ? "applied" : "refused")
                .description("changes of the credentials file or TLS files picked up without a restart").register(registry));
    }

    public void protocolViolation(int reasonCode) {
        String code = String.format("0x%02X", reasonCode);
        violations.computeIfAbsent(code, c -> Counter.builder("tbmq.protocol.violations").tag("reason", c)
                .description("connections closed for a protocol violation").register(registry)).increment();
    }

    public void connectRefused(int reasonCode) {
        refusedConnectCounter(reasonCode).increment();
    }

    private Counter refusedConnectCounter(int reasonCode) {
        return refusedConnects.computeIfAbsent(String.format("0x%02X", reasonCode), c -> Counter.builder("tbmq.connects.refused")
                .tag("reason", c).description("CONNECTs answered with an error").register(registry));
    }

    /** A connection closed after an unexpected exception (not I/O): each one is a bug to report. */
    public void internalError(Throwable cause) {
        internalErrors.computeIfAbsent(cause.getClass().getSimpleName(), c -> Counter.builder("tbmq.connections.errors")
                .tag("exception", c).description("connections closed after an unexpected exception (a bug)")
                .register(registry)).increment();
    }

    /**
     * The connect timeout ended a connection: {@code waiting} is "connect" (no CONNECT came) or the
     * step a CONNECT that came still waited for ("authentication", "previous-session", "session-store").
     */
    public void connectTimedOut(String listener, String waiting) {
        connectTimeouts.computeIfAbsent(listener + "/" + waiting, k -> Counter.builder("tbmq.connections.connect.timeouts")
                .tag("listener", listener).tag("waiting", waiting)
                .description("connections ended by the connect timeout, by what they were waiting for").register(registry)).increment();
    }

    /** A listener's shed counts, exported from the start at 0: an alert on their increase cannot see a counter that first appears at 1. */
    public void listenerOpened(String listener) {
        for (String reason : SHED_REASONS) {
            shedCounter(listener, reason);
        }
    }

    /** A connection closed right after accept: its listener was at max-connections ("limit") or max-connection-rate ("rate"). */
    public void connectionShed(String listener, String reason) {
        shedCounter(listener, reason).increment();
    }

    private Counter shedCounter(String listener, String reason) {
        return shed.computeIfAbsent(listener + "/" + reason, k -> Counter.builder("tbmq.connections.shed").tag("listener", listener)
                .tag("reason", reason).description("connections closed right after accept by a listener limit")
                .register(registry));
    }
}
