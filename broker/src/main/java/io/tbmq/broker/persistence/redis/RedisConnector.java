package io.tbmq.broker.persistence.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.tbmq.broker.config.RedisConfig;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * One shared asynchronous Lettuce connection (standalone or Cluster) with automatic flushing off:
 * commands are buffered and written together every {@code lettuce-batch-size} commands or one
 * {@code flush-interval} after the first of them, whichever comes first, the batching the TBMQ
 * paper measured. A caller whose commands are a batch already (a poll's writes) flushes at once
 * ({@link #flushNow}). The flush timer is armed only while something is buffered, so an idle node
 * does not wake every interval. Lua scripts run
 * by EVALSHA and are loaded again on NOSCRIPT (after a Redis restart or failover). Commands fail
 * fast while Redis is unreachable; the connection reconnects by itself.
 */
public final class RedisConnector implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(RedisConnector.class);

    private final AbstractRedisClient client;
    private final boolean cluster;
    /** Standalone: the node's host:port as configured. */
    private final String standaloneAddress;
    private volatile StatefulConnection<byte[], byte[]> connection;
    private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;
    private volatile int batchSize;
    private final AtomicInteger buffered = new AtomicInteger();
    /** A flush is scheduled for what is buffered. */
    private final AtomicBoolean flushArmed = new AtomicBoolean();
    private final ScheduledExecutorService flusher;
    private final long flushIntervalNanos;
    /**
     * Lettuce sends some commands on its own, uncounted by {@link #buffered}: one redirected by MOVED
     * or ASK while a slot moves, and those it replays after a reconnect. With automatic flushing off
     * they wait for the next flush; this bounds that wait when nothing else is being sent (a new
     * broker without clients waited for the 2 s health check on every script during a scale-up).
     */
    private static final long SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private volatile long lastFlush = System.nanoTime();
    private volatile long lastPingOk;
    private volatile String lastError = "not checked yet";
    /** On a Redis Cluster, which masters did not answer the last health check while others did. */
    private volatile String mastersNotAnswering;
    private final ScriptTimer scriptTimer;
    /** How long a script refused by a slot move is tried again before its caller is told. */
    private static final long RESHARD_RETRY_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** A script call this slow (a moving slot, a master failing over) is reported, a line per second at most. */
    private static final long SLOW_SCRIPT_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final RateLimitedLog SLOW = new RateLimitedLog(LOG, 1);

    public RedisConnector(RedisConfig config) {
        this(config, ScriptTimer.NONE);
    }

    /** {@code scriptTimer} hears of every script call: its duration, including a NOSCRIPT reload, and its outcome. */
    public RedisConnector(RedisConfig config, ScriptTimer scriptTimer) {
        this(config, scriptTimer, Duration.ofSeconds(2));
    }

    /** With a health check (a PING) every {@code pingInterval}. */
    RedisConnector(RedisConfig config, ScriptTimer scriptTimer, Duration pingInterval) {
        this.scriptTimer = scriptTimer;
        this.batchSize = Math.max(1, config.lettuceBatchSize());
        List<RedisURI> uris = new ArrayList<>();
        for (String node : config.nodes().split(",")) {
            String[] hostPort = node.trim().split(":");
            RedisURI.Builder uri = RedisURI.builder().withHost(hostPort[0])
                    .withPort(hostPort.length > 1 ? Integer.parseInt(hostPort[1]) : 6379)
                    .withTimeout(config.commandTimeout());
            config.password().ifPresent(p -> uri.withPassword(p.toCharArray()));
            uris.add(uri.build());
        }
        TimeoutOptions timeouts = TimeoutOptions.enabled(config.commandTimeout());
        SocketOptions sockets = SocketOptions.builder().connectTimeout(checkedConnectTimeout(config)).build();
        if ("cluster".equals(config.mode())) {
            RedisClusterClient c = RedisClusterClient.create(uris);
            c.setOptions(ClusterClientOptions.builder()
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(timeouts).socketOptions(sockets)
                    // A master added by a scale-up answers MOVED before the next topology refresh
                    // lists it; follow the redirect instead of refusing it until then.
                    .validateClusterNodeMembership(false)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(config.topologyRefreshInterval()).enableAllAdaptiveRefreshTriggers()
                            // Lettuce's default waits 30 s between refreshes a redirect or a failed
                            // reconnect triggers: a scale edit changes the topology every second or so.
                            .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1)).build())
                    .build());
            this.client = c;
            this.cluster = true;
            this.standaloneAddress = null;
        } else if ("standalone".equals(config.mode())) {
            RedisClient c = RedisClient.create(uris.get(0));
            c.setOptions(ClientOptions.builder()
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(timeouts).socketOptions(sockets).build());
            this.client = c;
            this.cluster = false;
            this.standaloneAddress = uris.get(0).getHost() + ":" + uris.get(0).getPort();
        } else {
            throw new IllegalArgumentException("tbmq.redis.mode must be standalone or cluster, not " + config.mode());
        }
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("tbmq-redis", true));
        this.flusher = scheduler;
        connect();
        long interval = Math.max(100_000, config.flushInterval().toNanos());
        this.flushIntervalNanos = interval;
        scheduler.scheduleWithFixedDelay(this::sweep, SWEEP_NANOS, SWEEP_NANOS, TimeUnit.NANOSECONDS);
        scheduler.scheduleWithFixedDelay(this::ping, 1_000, pingInterval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Netty counts the connect timeout in whole milliseconds, and 0 would mean none at all. */
    static Duration checkedConnectTimeout(RedisConfig config) {
        Duration connect = config.connectTimeout();
        if (connect.toMillis() < 1) {
            throw new IllegalArgumentException("tbmq.redis.connect-timeout must be at least 1ms, not " + connect);
        }
        if (connect.compareTo(config.commandTimeout()) >= 0) {
            LOG.warnf("tbmq.redis.connect-timeout %s has no effect: tbmq.redis.command-timeout %s bounds the whole connection set-up",
                    connect, config.commandTimeout());
        }
        return connect;
    }

    /**
     * Opens the shared connection; while Redis is unreachable (also at start) it is tried again on
     * every health check, and commands fail fast meanwhile. Once open, Lettuce reconnects by itself.
     */
    private synchronized void connect() {
        if (connection != null) {
            return;
        }
        try {
            if (cluster) {
                StatefulRedisClusterConnection<byte[], byte[]> c = ((RedisClusterClient) client).connect(ByteArrayCodec.INSTANCE);
                c.setAutoFlushCommands(false);
                commands = c.async();
                connection = c;
            } else {
                StatefulRedisConnection<byte[], byte[]> c = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
                c.setAutoFlushCommands(false);
                commands = c.async();
                connection = c;
            }
            LOG.info("connected to Redis");
            if (cluster) {
                warnOfFullCoverage();
            }
        } catch (RuntimeException e) {
            lastError = e.getMessage();
            LOG.warnf("Redis not reachable yet (%s); retrying", e.getMessage());
        }
    }

    /**
     * A Redis Cluster the operator does not manage may keep Redis's default: with a master down,
     * every master refuses commands, and every client's persistent messages wait, not only those
     * of the clients on that master. Said once per connection; where CONFIG is not allowed (some
     * managed services), nothing is said.
     */
    private void warnOfFullCoverage() {
        mastersRequiringFullCoverage().whenComplete((masters, e) -> {
            if (e != null) {
                LOG.debugf("cluster-require-full-coverage could not be read: %s", unwrap(e).toString());
            } else if (!masters.isEmpty()) {
                LOG.warnf("Redis Cluster masters %s run with cluster-require-full-coverage yes: while any master is down, all of them "
                        + "refuse commands and every client's persistent messages wait. Set it to no on every master (the operator "
                        + "does so for the Redis Cluster it manages)", masters);
            }
        });
    }

    /** The masters of a Redis Cluster that run with {@code cluster-require-full-coverage yes} (none on standalone Redis). */
    public CompletableFuture<List<String>> mastersRequiringFullCoverage() {
        if (!(connection instanceof StatefulRedisClusterConnection<byte[], byte[]> c)) {
            return CompletableFuture.completedFuture(List.of());
        }
        Map<io.lettuce.core.cluster.models.partitions.RedisClusterNode, CompletableFuture<Map<String, String>>> answers;
        try {
            answers = c.async().masters().commands().configGet("cluster-require-full-coverage").asMap();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        flush();
        List<String> requiring = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<?>> all = new ArrayList<>();
        answers.forEach((node, answer) -> all.add(answer.orTimeout(3, TimeUnit.SECONDS).thenAccept(config -> {
            if ("yes".equalsIgnoreCase(config.get("cluster-require-full-coverage"))) {
                requiring.add(node.getUri().getHost() + ":" + node.getUri().getPort());
            }
        })));
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<String> sorted = new ArrayList<>(requiring);
            java.util.Collections.sort(sorted);
            return sorted;
        });
    }

    /**
     * Asks every master (standalone: the one node) for an INFO {@code section}: its answer by the
     * master's address. Empty while not connected.
     */
    public Map<String, CompletableFuture<String>> infoOfEachMaster(String section) {
        Map<String, CompletableFuture<String>> answers = new java.util.TreeMap<>();
        if (connection instanceof StatefulRedisClusterConnection<byte[], byte[]> c) {
            try {
                c.async().masters().commands().info(section).asMap().forEach((node, answer) ->
                        answers.put(node.getUri().getHost() + ":" + node.getUri().getPort(), answer.toCompletableFuture()));
            } catch (RuntimeException e) {
                return Map.of();
            }
        } else if (connection instanceof StatefulRedisConnection<byte[], byte[]> c) {
            answers.put(standaloneAddress, submit(x -> x.info(section)));
        }
        flush();
        return answers;
    }

    /** Commands buffered before a flush from now on (a live setting: the operator raises it with the load). */
    public void batchSize(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("tbmq.redis.lettuce-batch-size must be at least 1, got " + size);
        }
        this.batchSize = size;
    }

    /** Issues one command into the batch; it is written once the batch is full or the interval passed. */
    public <T> CompletableFuture<T> submit(Function<RedisClusterAsyncCommands<byte[], byte[]>, RedisFuture<T>> command) {
        RedisClusterAsyncCommands<byte[], byte[]> c = commands;
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("Redis not connected: " + lastError));
        }
        CompletableFuture<T> result;
        try {
            result = command.apply(c).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (buffered.incrementAndGet() >= batchSize) {
            flush();
        } else if (flushArmed.compareAndSet(false, true)) {
            afterFlushInterval(this::timedFlush);
        }
        return result;
    }

    /** Writes what is buffered now: for a caller whose commands are already one batch. */
    public void flushNow() {
        if (buffered.get() > 0) {
            flush();
        }
    }

    /** Runs a script by EVALSHA; on NOSCRIPT by EVAL, which loads it again. */
    public CompletableFuture<Object> script(LuaScript script, byte[][] keys, byte[]... args) {
        long start = System.nanoTime();
        CompletableFuture<Object> done = timed(script, null, start);
        attempt(script, keys, args, done, start, 0);
        return done;
    }

    /** A call's future, reported to the script timer and, when slow, in the log once it completes; {@code master} if sent to one. */
    private CompletableFuture<Object> timed(LuaScript script, Master master, long start) {
        CompletableFuture<Object> done = new CompletableFuture<>();
        done.whenComplete((v, e) -> {
            long nanos = System.nanoTime() - start;
            scriptTimer.completed(script.name(), nanos, e != null);
            if (nanos >= SLOW_SCRIPT_NANOS) {
                String on = master == null ? "" : " on " + master.host() + ":" + master.port();
                SLOW.info("script %s%s took %d ms%s", script.name(), on, nanos / 1_000_000, e == null ? "" : " and failed: " + unwrap(e));
            }
        });
        return done;
    }

    /**
     * One run of the script; a run refused because its slot is being moved between masters is run
     * again after a short pause (every script here may run twice: the stores recognise what they
     * applied), for up to {@link #RESHARD_RETRY_NANOS}, so a moving slot holds up only its own keys
     * for about as long as the move takes instead of failing the caller's whole batch.
     */
    private void attempt(LuaScript script, byte[][] keys, byte[][] args, CompletableFuture<Object> done, long start, int retries) {
        this.<Object>submit(c -> c.evalsha(script.sha(), ScriptOutputType.MULTI, keys, args)).whenComplete((value, error) -> {
            if (error == null) {
                done.complete(value);
            } else if (unwrap(error) instanceof RedisNoScriptException) {
                this.<Object>submit(c -> c.eval(script.body().getBytes(StandardCharsets.UTF_8), ScriptOutputType.MULTI, keys, args))
                        .whenComplete((v, e) -> {
                            if (e == null) {
                                done.complete(v);
                            } else {
                                retryOrFail(script, keys, args, done, start, retries, e);
                            }
                        });
            } else {
                retryOrFail(script, keys, args, done, start, retries, error);
            }
        });
    }

    private void retryOrFail(LuaScript script, byte[][] keys, byte[][] args, CompletableFuture<Object> done, long start, int retries,
            Throwable error) {
        if (!isResharding(unwrap(error)) || System.nanoTime() - start > RESHARD_RETRY_NANOS) {
            done.completeExceptionally(error);
            return;
        }
        long delayMillis = Math.min(200, 10L << Math.min(retries, 5));
        try {
            flusher.schedule(() -> attempt(script, keys, args, done, start, retries + 1), delayMillis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            done.completeExceptionally(error);
        }
    }

    /** Errors Redis Cluster answers while a slot moves between masters (Lettuce follows MOVED and ASK itself). */
    static boolean isResharding(Throwable error) {
        String message = error.getMessage();
        return message != null && (message.startsWith("TRYAGAIN") || message.contains("non local key")
                || error instanceof io.lettuce.core.cluster.UnknownPartitionException);
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    private void timedFlush() {
        // Disarmed before the flush: a command buffered after the flush arms the next one.
        flushArmed.set(false);
        flushNow();
    }

    private void sweep() {
        if (System.nanoTime() - lastFlush >= SWEEP_NANOS) {
            flush();
        }
    }

    private void flush() {
        buffered.set(0);
        lastFlush = System.nanoTime();
        StatefulConnection<byte[], byte[]> c = connection;
        if (c == null) {
            return;
        }
        try {
            c.flushCommands();
        } catch (RuntimeException e) {
            LOG.debugf("flush failed: %s", e.getMessage());
        }
    }

    private void ping() {
        if (connection == null) {
            connect();
            if (connection == null) {
                return;
            }
        }
        // Not waited for here: this thread also runs the interval flush, which must not stop while
        // a slow master keeps the answer.
        List<CompletableFuture<String>> pongs = new ArrayList<>();
        if (connection instanceof StatefulRedisClusterConnection<byte[], byte[]> c) {
            // Every master: one gone stops only the messages of the clients whose keys it holds, so
            // the store counts as reachable while any master answers (the others' clients go on).
            try {
                c.async().masters().commands().ping().forEach(p -> pongs.add(p.toCompletableFuture()));
            } catch (RuntimeException e) {
                pongs.add(CompletableFuture.failedFuture(e));
            }
        } else {
            pongs.add(submit(x -> x.ping()));
        }
        flush();
        AtomicInteger pending = new AtomicInteger(pongs.size());
        List<String> failed = java.util.Collections.synchronizedList(new ArrayList<>());
        for (CompletableFuture<String> pong : pongs) {
            pong.orTimeout(3, TimeUnit.SECONDS).whenComplete((ok, e) -> {
                if (e == null) {
                    lastPingOk = System.currentTimeMillis();
                } else {
                    Throwable cause = unwrap(e);
                    failed.add(cause.getMessage() != null ? cause.getMessage() : cause.toString());
                }
                if (pending.decrementAndGet() == 0) {
                    String errors = failed.isEmpty() ? null : String.join("; ", failed);
                    if (errors != null) {
                        lastError = errors;
                    }
                    mastersNotAnswering = pongs.size() > 1 && errors != null && failed.size() < pongs.size()
                            ? failed.size() + " of " + pongs.size() + " masters not answering (" + errors + ")" : null;
                }
            });
        }
    }

    /** A master of a Redis Cluster, by the address Lettuce routes a slot's commands to. */
    public record Master(String host, int port) {
    }

    /**
     * On a Redis Cluster, the master that serves {@code key}'s slot as this client last learned the
     * topology, if the connection to it is open; null on standalone Redis, while the slot's master
     * is unknown, or while its connection is still being opened (asking for it starts that). A call
     * on an open connection is written in the order it was issued, with the slot-routed commands.
     */
    public Master masterOf(byte[] key) {
        if (!(connection instanceof StatefulRedisClusterConnection<byte[], byte[]> c)) {
            return null;
        }
        io.lettuce.core.cluster.models.partitions.RedisClusterNode master = c.getPartitions()
                .getMasterBySlot(io.lettuce.core.cluster.SlotHash.getSlot(key));
        if (master == null || master.getUri() == null) {
            return null;
        }
        try {
            CompletableFuture<?> open = c.getConnectionAsync(master.getUri().getHost(), master.getUri().getPort());
            return open.isDone() && !open.isCompletedExceptionally() ? new Master(master.getUri().getHost(), master.getUri().getPort())
                    : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Runs a script on one master of a Redis Cluster, declaring no keys: the script is given the
     * keys of several slots in {@code args} and checks that this master serves each of them
     * before it writes (see add.lua). Not retried here: a slot that moved is the caller's to send
     * again, to wherever it is now. Batched and flushed like every other command, on the connection
     * Lettuce uses for the master's slots (by host and port, not node id), so that it is written
     * before any command issued after it for one of those slots.
     */
    public CompletableFuture<Object> scriptOn(Master master, LuaScript script, byte[]... args) {
        long start = System.nanoTime();
        CompletableFuture<Object> done = timed(script, master, start);
        if (!(connection instanceof StatefulRedisClusterConnection<byte[], byte[]> c)) {
            done.completeExceptionally(new IllegalStateException("Redis Cluster not connected: " + lastError));
            return done;
        }
        byte[][] noKeys = new byte[0][];
        CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> node;
        try {
            node = c.getConnectionAsync(master.host(), master.port()).thenApply(n -> n.async());
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
            return done;
        }
        node.thenCompose(n -> counted(n.evalsha(script.sha(), ScriptOutputType.MULTI, noKeys, args)))
                .whenComplete((value, error) -> {
                    if (error == null) {
                        done.complete(value);
                    } else if (unwrap(error) instanceof RedisNoScriptException) {
                        node.thenCompose(n -> counted(n.eval(script.body().getBytes(StandardCharsets.UTF_8), ScriptOutputType.MULTI,
                                noKeys, args))).whenComplete((v, e) -> {
                                    if (e == null) {
                                        done.complete(v);
                                    } else {
                                        done.completeExceptionally(e);
                                    }
                                });
                    } else {
                        done.completeExceptionally(error);
                    }
                });
        return done;
    }

    /** A command issued on a master's own connection joins the batch like those of {@link #submit}. */
    private <T> CompletableFuture<T> counted(RedisFuture<T> command) {
        if (buffered.incrementAndGet() >= batchSize) {
            flush();
        } else if (flushArmed.compareAndSet(false, true)) {
            afterFlushInterval(this::timedFlush);
        }
        return command.toCompletableFuture();
    }

    /** Whether this is a Redis Cluster (a script may only touch keys of one slot). */
    public boolean cluster() {
        return cluster;
    }

    /** Runs {@code task} once, one flush interval from now, on the flushing thread (e.g. to send gathered commands). */
    public void afterFlushInterval(Runnable task) {
        after(flushIntervalNanos, task);
    }

    /** Runs {@code task} once, {@code nanos} from now, on the flushing thread (e.g. to try failed commands again). */
    public void after(long nanos, Runnable task) {
        try {
            flusher.schedule(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.warnf("Redis timer task failed: %s", e.toString());
                }
            }, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // Closing: nothing is sent any more.
        }
    }

    /** Redis (on a Cluster: any master) answered within the last few seconds. */
    public boolean reachable() {
        return System.currentTimeMillis() - lastPingOk < 6_000;
    }

    public String status() {
        String partly = mastersNotAnswering;
        return reachable() ? partly == null ? "connected" : "connected; " + partly : "unreachable: " + lastError;
    }

    @Override
    public void close() {
        flusher.shutdownNow();
        try {
            if (connection != null) {
                connection.close();
            }
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
