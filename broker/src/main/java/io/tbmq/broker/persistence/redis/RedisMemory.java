package io.tbmq.broker.persistence.redis;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

/**
 * How full each Redis master's memory is, read with INFO memory every check interval. A master
 * with a maxmemory and noeviction (the operator's Redis) refuses to store more once it is full:
 * the DEVICE sessions whose keys it holds get no new messages, and the routing consumers commit
 * nothing past them. Said in the log as a master fills, and reported for the metrics (and the
 * TbmqRedisMemoryHigh alert) long before that. A master that would evict keys instead (a
 * maxmemory-policy other than noeviction, as external Redis services often have) is said too,
 * since it would drop stored messages silently.
 */
public final class RedisMemory {
    /** A master going over this share of its maxmemory is logged once... */
    static final double WARN_AT = 0.9;
    /** ...and again only after it went back under this. */
    static final double CLEAR_AT = 0.8;
    private static final long ANSWER_WAIT_SECONDS = 3;
    /** How many checks a master that does not answer keeps its last reading. */
    static final int KEPT_FOR_CHECKS = 3;
    private static final Logger LOG = Logger.getLogger(RedisMemory.class);

    /** Memory a master uses as it counts it against maxmemory, that maxmemory (0: none), and its maxmemory-policy. */
    public record Usage(long used, long max, String policy) {
        public Usage(long used, long max) {
            this(used, max, NO_EVICTION);
        }

        /** Used of maxmemory; NaN without a maxmemory (Redis then takes what the machine has). */
        public double ratio() {
            return max > 0 ? (double) used / max : Double.NaN;
        }

        /**
         * Whether it drops keys to make room once full: any policy but noeviction, the volatile-*
         * ones included, since every stored message has a time to live.
         */
        public boolean evicts() {
            return max > 0 && policy != null && !NO_EVICTION.equals(policy);
        }
    }

    static final String NO_EVICTION = "noeviction";

    private record Reading(Usage usage, long atNanos) {
    }

    /** Hears each round's usage by master address. */
    @FunctionalInterface
    public interface Report {
        void memory(Map<String, Usage> byMaster);
    }

    private final RedisConnector redis;
    private final long intervalNanos;
    private final Report report;
    /** The last answer of each master, kept on the scheduler's thread. */
    private final Map<String, Reading> readAt = new java.util.HashMap<>();
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private final Set<String> evicting = ConcurrentHashMap.newKeySet();

    /** {@code interval} zero: never checked. */
    public RedisMemory(RedisConnector redis, Duration interval, Report report) {
        this.redis = redis;
        this.intervalNanos = interval.toNanos();
        this.report = report;
    }

    public void start() {
        if (intervalNanos > 0) {
            redis.after(TimeUnit.SECONDS.toNanos(1), this::check);
        }
    }

    private void check() {
        Map<String, CompletableFuture<String>> answers;
        try {
            answers = redis.infoOfEachMaster("memory");
        } catch (RuntimeException e) {
            LOG.debugf("Redis memory not read: %s", e);
            redis.after(intervalNanos, this::check);
            return;
        }
        Map<String, Usage> fresh = new ConcurrentHashMap<>();
        CompletableFuture<?>[] each = answers.entrySet().stream().map(a -> a.getValue()
                .orTimeout(ANSWER_WAIT_SECONDS, TimeUnit.SECONDS)
                .handle((info, e) -> {
                    Usage usage = e == null ? parse(info) : null;
                    if (usage != null) {
                        fresh.put(a.getKey(), usage);
                    }
                    return null;
                })).toArray(CompletableFuture[]::new);
        // Applied on the Redis scheduler's thread, not on the event loop that completed the last answer.
        CompletableFuture.allOf(each).whenComplete((v, e) -> redis.after(0, () -> {
            try {
                if (!answers.isEmpty()) {
                    update(merge(answers.keySet(), fresh, System.nanoTime()));
                }
            } catch (RuntimeException failed) {
                LOG.warnf("Redis memory readings not applied: %s", failed.toString());
            } finally {
                redis.after(intervalNanos, this::check);
            }
        }));
    }

    /**
     * This round's readings of the {@code listed} masters: a master that did not answer keeps its last
     * reading for {@link #KEPT_FOR_CHECKS} checks, so that one slow answer does not restart an alert,
     * and then drops out, so that a broker cut off from it does not report an old value for ever.
     */
    Map<String, Usage> merge(Set<String> listed, Map<String, Usage> fresh, long nowNanos) {
        Map<String, Usage> round = new TreeMap<>();
        for (String master : listed) {
            Usage usage = fresh.get(master);
            Reading before = readAt.get(master);
            if (usage != null) {
                readAt.put(master, new Reading(usage, nowNanos));
                round.put(master, usage);
            } else if (before != null && nowNanos - before.atNanos() <= KEPT_FOR_CHECKS * Math.max(intervalNanos, 1)) {
                round.put(master, before.usage());
            }
        }
        readAt.keySet().retainAll(round.keySet());
        return round;
    }

    /** One round's readings: masters no longer listed are forgotten. */
    void update(Map<String, Usage> now) {
        warned.retainAll(now.keySet());
        evicting.retainAll(now.keySet());
        now.forEach((master, usage) -> {
            if (usage.evicts() && evicting.add(master)) {
                // An external Redis's default may well be volatile-lru (a cache's setting).
                LOG.warnf("Redis master %s evicts keys when it is full (maxmemory-policy %s): it would drop messages stored for "
                        + "offline DEVICE clients (with an allkeys-* policy their sessions' state too) without a word. Set "
                        + "maxmemory-policy noeviction, so that a full master refuses to store instead (the operator's Redis runs with it)",
                        master, usage.policy());
            } else if (!usage.evicts() && evicting.remove(master)) {
                LOG.infof("Redis master %s no longer evicts keys (%s)", master, usage.max() == 0 ? "no maxmemory"
                        : "maxmemory-policy " + (usage.policy() == null ? "not said" : usage.policy()));
            }
            double ratio = usage.ratio();
            if (ratio >= WARN_AT && warned.add(master)) {
                LOG.warnf("Redis master %s uses %.0f%% of its maxmemory (%.1f of %.1f MiB). Once full it refuses to store messages "
                        + "for offline DEVICE clients whose keys it holds, and those clients get nothing new until it has room: "
                        + "give Redis more memory or masters, or keep fewer messages per client (tbmq.persistence.device-messages-limit, "
                        + "device-message-ttl)", master, ratio * 100, usage.used() / 1048576.0, usage.max() / 1048576.0);
            } else if (!(ratio >= CLEAR_AT) && warned.remove(master)) {
                if (Double.isNaN(ratio)) {
                    LOG.infof("Redis master %s has no maxmemory now", master);
                } else {
                    LOG.infof("Redis master %s uses %.0f%% of its maxmemory now", master, ratio * 100);
                }
            }
        });
        report.memory(Collections.unmodifiableMap(now));
    }

    /** Whether {@code master} has been said to evict keys, and not yet to have stopped. */
    boolean evicting(String master) {
        return evicting.contains(master);
    }

    /** Whether {@code master} has been said to be nearly full and not yet to be under {@link #CLEAR_AT} again. */
    boolean warned(String master) {
        return warned.contains(master);
    }

    /**
     * The usage in an INFO memory answer, or null without used_memory. Redis counts used_memory less
     * mem_not_counted_for_evict (replication and AOF buffers) against maxmemory.
     */
    static Usage parse(String info) {
        Long used = null;
        long notCounted = 0;
        long max = 0;
        String policy = null;
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String key = line.substring(0, colon);
            String value = line.substring(colon + 1).strip();
            try {
                switch (key) {
                    case "used_memory" -> used = Long.parseLong(value);
                    case "mem_not_counted_for_evict" -> notCounted = Long.parseLong(value);
                    case "maxmemory" -> max = Long.parseLong(value);
                    case "maxmemory_policy" -> policy = value;
                    default -> {
                        // not needed
                    }
                }
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return used == null ? null : new Usage(Math.max(0, used - notCounted), max, policy);
    }
}
