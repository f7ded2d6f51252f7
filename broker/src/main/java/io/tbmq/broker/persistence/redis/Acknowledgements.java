package io.tbmq.broker.persistence.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.tbmq.broker.util.Countdown;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * PUBACKs and PUBCOMPs of DEVICE sessions on their way to Redis: gathered for one flush interval
 * (nothing waits for them) and sent as one remove.lua call per call group of the store.
 *
 * <p>A call that fails (Redis down or failing over) is tried again, with a backoff, for up to
 * {@code tbmq.persistence.acknowledgement-retry}: otherwise the acknowledged messages would stay in Redis and come again,
 * with DUP, at the session's next load. Removing twice is harmless (a reply lost after the call
 * ran). What must never happen is a late removal after the session was cleared: packet ids start
 * again at 1 and it would remove a message of the next session. Two guards:
 * <ul>
 * <li>when this node lets a session go (clears it, or the client moved to another node), the
 * client's acknowledgements made before are dropped, wherever they are: gathered, in a failing
 * call, or waiting to be tried again;
 * <li>another node may clear the session before this one learns that the client moved: clear.lua
 * marks the time of the clear and remove.lua skips an acknowledgement made before it. That
 * compares this node's clock with Redis', which NTP keeps within milliseconds, far less than a
 * client takes to reconnect and acknowledge again.
 * </ul>
 */
final class Acknowledgements {
    /** Gathered before they are sent without waiting for the flush interval. */
    private static final int BATCH = 256;
    /** Messages in one remove call at most, so a backlog tried again never holds Redis up for long. */
    private static final int MAX_PER_CALL = 500;
    /** Waiting to be tried again at most; past it a failed one is given up (it comes again, with DUP). */
    private static final int MAX_RETRIES = 100_000;
    /** How long a failed removal is tried again unless configured: longer than a Redis pod takes to fail over or come back. */
    static final Duration DEFAULT_RETRY = Duration.ofMinutes(2);
    private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long LAST_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long PRUNE_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long NEVER = Long.MIN_VALUE;
    /** What {@link #inFlight} returns for a client with no removal call in flight. */
    static final CompletableFuture<Void> NONE_IN_FLIGHT = CompletableFuture.completedFuture(null);
    private static final Logger LOG = Logger.getLogger(DeviceMessageStore.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);

    private final RedisConnector redis;
    private final RedisKeys keys;
    private final LuaScript remove;
    /** The call a client's acknowledgements join: by master (or all in one on standalone Redis). */
    private final Function<String, Object> callGroup;
    /** The call of a client whose slot moved: its own slot (or slot group), where Redis redirects it. */
    private final Function<String, Object> bySlot;

    private final ConcurrentLinkedQueue<Ack> gathered = new ConcurrentLinkedQueue<>();
    private final AtomicInteger gatheredCount = new AtomicInteger();
    /** Per client, so that a load takes its client's own without a scan of everyone's. */
    private final ConcurrentHashMap<String, List<Ack>> retries = new ConcurrentHashMap<>();
    private final AtomicInteger retryCount = new AtomicInteger();
    private final AtomicBoolean retryArmed = new AtomicBoolean();
    private final AtomicLong retryDelay = new AtomicLong(FIRST_RETRY_NANOS);
    /** Orders acknowledgements and let-gos. */
    private final AtomicLong sequence = new AtomicLong();
    /** Made and not done with: gathered, in a call, or waiting to be tried again. */
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Per client, its last let-go while acknowledgements were outstanding; kept for {@link #letGoKeptNanos}. */
    private final ConcurrentHashMap<String, LetGo> letGo = new ConcurrentHashMap<>();
    private final AtomicLong lastPrune = new AtomicLong(System.nanoTime());
    /**
     * Per client, its removal calls not answered yet (one future for all of them). A call may go out
     * again after a later one (re-sent as EVAL after NOSCRIPT, after a slot move or while its slot
     * moves), so a load waits for these rather than relying on the order it was written in.
     */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> unanswered = new ConcurrentHashMap<>();
    private final AtomicLong failedRemovals = new AtomicLong();
    private final AtomicLong givenUp = new AtomicLong();
    /** How long a failed removal is tried again. */
    private final long retryForNanos;
    /** How long a let-go is remembered: past the last try of any acknowledgement made before it. */
    private final long letGoKeptNanos;

    /**
     * {@code made}: its place in {@link #sequence}; {@code madeMillis}: when, by the wall clock, for
     * remove.lua; {@code failingSince}: when its removal first failed (nanoTime), or {@link #NEVER}.
     */
    private record Ack(String clientId, int packetId, long made, long madeMillis, long failingSince) {
        Ack failedAt(long now) {
            return failingSince == NEVER ? new Ack(clientId, packetId, made, madeMillis, now) : this;
        }
    }

    private record LetGo(long sequence, long nanos) {
    }

    Acknowledgements(RedisConnector redis, RedisKeys keys, LuaScript remove, Function<String, Object> callGroup,
            Function<String, Object> bySlot, Duration retryFor) {
        this.retryForNanos = retryFor.toNanos();
        this.letGoKeptNanos = retryForNanos + TimeUnit.MINUTES.toNanos(1);
        this.redis = redis;
        this.keys = keys;
        this.remove = remove;
        this.callGroup = callGroup;
        this.bySlot = bySlot;
    }

    void add(String clientId, int packetId) {
        // Counted before its place is taken: a let-go that comes after it sees it outstanding.
        outstanding.incrementAndGet();
        gathered.add(new Ack(clientId, packetId, sequence.incrementAndGet(), System.currentTimeMillis(), NEVER));
        int pending = gatheredCount.incrementAndGet();
        if (pending >= BATCH) {
            flush();
        } else if (pending == 1) {
            // The first of a batch: whatever gathers within one flush interval goes with it.
            redis.afterFlushInterval(this::flush);
        }
    }

    /** Sends what is gathered; those to try again wait for their timer. */
    void flush() {
        send(false, null);
    }

    /**
     * Sends what is gathered and the client's own acknowledgements waiting to be tried again, before
     * its session is loaded: otherwise a client back within the backoff (up to 5 s) after Redis
     * failed would get those messages again, with DUP. Others keep waiting for their timer.
     *
     * <p>Returns {@link #inFlight} after that: the load goes once they are answered (or failed).
     * Written after them is not enough: a removal re-sent as EVAL after NOSCRIPT (Redis restarted,
     * or a replica took over, without remove.lua cached but with load.lua cached again by another
     * client's load) would run after the load.
     */
    CompletableFuture<Void> flushFor(String clientId) {
        send(false, clientId);
        return inFlight(clientId);
    }

    /**
     * Completes when the client's removal calls in flight now are answered (or failed);
     * {@link #NONE_IN_FLIGHT} when there are none. Not all it will have: an answer may send one anew
     * (its slot moved), tracked before that answer counts, so a caller asks again once this
     * completes, and is done when it gets the same future back (or none).
     */
    CompletableFuture<Void> inFlight(String clientId) {
        return unanswered.getOrDefault(clientId, NONE_IN_FLIGHT);
    }

    /**
     * This node is done with the client's session: it is cleared, or the client connected to another
     * node (which may clear it). Its acknowledgements made before now are dropped.
     */
    void letGo(String clientId) {
        long at = sequence.incrementAndGet();
        if (outstanding.get() == 0) {
            // Nothing made before it is left: one made before would still be counted.
            return;
        }
        long now = System.nanoTime();
        letGo.merge(clientId, new LetGo(at, now), (old, next) -> old.sequence() > next.sequence() ? old : next);
        long last = lastPrune.get();
        if (now - last > PRUNE_EVERY_NANOS && lastPrune.compareAndSet(last, now)) {
            letGo.values().removeIf(l -> now - l.nanos() > letGoKeptNanos);
        }
    }

    /**
     * Sends what is gathered, with every acknowledgement waiting to be tried again or only
     * {@code client}'s (none when null). Synchronized so that a load or clear issued after it is
     * written after these calls.
     */
    private synchronized void send(boolean withRetries, String client) {
        Map<Object, Map<String, List<Ack>>> calls = new LinkedHashMap<>();
        if (withRetries) {
            for (String waiting : retries.keySet()) {
                takeRetries(waiting, calls);
            }
        } else if (client != null) {
            takeRetries(client, calls);
        }
        Ack ack;
        if (gatheredCount.get() > 0) {
            while ((ack = gathered.poll()) != null) {
                gatheredCount.decrementAndGet();
                gather(calls, callGroup, ack);
            }
        }
        for (Map.Entry<Object, Map<String, List<Ack>>> call : calls.entrySet()) {
            sendInChunks(call.getKey(), call.getValue());
        }
    }

    private void takeRetries(String client, Map<Object, Map<String, List<Ack>>> calls) {
        List<Ack> waiting = retries.remove(client);
        if (waiting == null) {
            return;
        }
        retryCount.addAndGet(-waiting.size());
        for (Ack ack : waiting) {
            gather(calls, callGroup, ack);
        }
    }

    private void gather(Map<Object, Map<String, List<Ack>>> calls, Function<String, Object> group, Ack ack) {
        if (letGoSince(ack)) {
            done(1);
            return;
        }
        calls.computeIfAbsent(group.apply(ack.clientId()), g -> new LinkedHashMap<>())
                .computeIfAbsent(ack.clientId(), c -> new ArrayList<>()).add(ack);
    }

    private boolean letGoSince(Ack ack) {
        LetGo l = letGo.get(ack.clientId());
        return l != null && l.sequence() > ack.made();
    }

    /** One call per {@link #MAX_PER_CALL} messages; a client's acknowledgements stay in one call. */
    private void sendInChunks(Object group, Map<String, List<Ack>> byClient) {
        Map<String, List<Ack>> chunk = new LinkedHashMap<>();
        int messages = 0;
        for (Map.Entry<String, List<Ack>> client : byClient.entrySet()) {
            if (!chunk.isEmpty() && messages + client.getValue().size() > MAX_PER_CALL) {
                tryRemoveCall(group, chunk);
                chunk = new LinkedHashMap<>();
                messages = 0;
            }
            chunk.put(client.getKey(), client.getValue());
            messages += client.getValue().size();
        }
        tryRemoveCall(group, chunk);
    }

    private void tryRemoveCall(Object group, Map<String, List<Ack>> byClient) {
        try {
            removeCall(group, byClient);
        } catch (RuntimeException e) {
            // Failed before it was sent (the call's outcome is handled where it completes).
            failed(byClient.values().stream().flatMap(List::stream).toList(), e);
        }
    }

    private void removeCall(Object group, Map<String, List<Ack>> byClient) {
        List<String> clients = new ArrayList<>(byClient.keySet());
        byte[][] keyArray = new byte[clients.size() * 2][];
        for (int c = 0; c < clients.size(); c++) {
            keyArray[2 * c] = keys.messages(clients.get(c));
            keyArray[2 * c + 1] = keys.cleared(clients.get(c));
        }
        List<byte[]> args = new ArrayList<>();
        if (group instanceof RedisConnector.Master) {
            args.add(num(clients.size()));
            args.addAll(List.of(keyArray));
        }
        List<Ack> sent = new ArrayList<>();
        for (String client : clients) {
            List<Ack> acked = byClient.get(client);
            sent.addAll(acked);
            args.add(num(acked.size()));
            for (Ack ack : acked) {
                args.add(keys.message(client, ack.packetId()));
                args.add(num(ack.madeMillis()));
            }
        }
        if (!(group instanceof RedisConnector.Master master)) {
            track(clients, redis.script(remove, keyArray, args.toArray(byte[][]::new)).whenComplete((v, e) -> {
                if (e != null) {
                    failed(sent, e);
                } else {
                    removed(sent, sent.size());
                }
            }));
            return;
        }
        // Tracked until its handler ran: a client whose slot moved is tracked in its new call by then.
        track(clients, redis.scriptOn(master, remove, args.toArray(byte[][]::new)).whenComplete((result, error) -> {
            if (error != null) {
                failed(sent, error);
                return;
            }
            List<String> elsewhere;
            try {
                elsewhere = leftOut(clients, result);
            } catch (RuntimeException unexpected) {
                // Whatever it removed, removing again is harmless.
                failed(sent, unexpected);
                return;
            }
            removed(sent, sent.size() - again(elsewhere, byClient));
        }));
    }

    /** Marks {@code clients}' removals unanswered until {@code call} completes, with any of theirs still unanswered. */
    private void track(List<String> clients, CompletableFuture<?> call) {
        if (call.isDone()) {
            return;
        }
        CompletableFuture<Void> answered = call.handle((v, e) -> null);
        for (String client : clients) {
            CompletableFuture<Void> all = unanswered.compute(client,
                    (c, earlier) -> earlier == null || earlier.isDone() ? answered : CompletableFuture.allOf(earlier, answered));
            if (all != answered) {
                // Outside compute: a future already complete runs its action at once, which removes from the map.
                all.whenComplete((v, e) -> unanswered.remove(client, all));
            }
        }
        answered.whenComplete((v, e) -> {
            for (String client : clients) {
                unanswered.remove(client, answered);
            }
        });
    }

    /**
     * Clients whose slots moved go again, each where Redis redirects it; under the lock of
     * {@link #send}, so that a clear issued after a let-go is written after them or finds them dropped.
     * Returns how many acknowledgements went again.
     */
    private synchronized int again(List<String> elsewhere, Map<String, List<Ack>> byClient) {
        if (elsewhere.isEmpty()) {
            return 0;
        }
        Map<Object, Map<String, List<Ack>>> calls = new LinkedHashMap<>();
        int count = 0;
        for (String client : elsewhere) {
            for (Ack ack : byClient.get(client)) {
                count++;
                gather(calls, bySlot, ack);
            }
        }
        for (Map.Entry<Object, Map<String, List<Ack>>> call : calls.entrySet()) {
            sendInChunks(call.getKey(), call.getValue());
        }
        redis.flushNow();
        return count;
    }

    private void removed(List<Ack> sent, int count) {
        if (sent.stream().anyMatch(a -> a.failingSince() != NEVER)) {
            // Redis takes removals again: the next failure starts the backoff afresh.
            retryDelay.set(FIRST_RETRY_NANOS);
        }
        done(count);
    }

    /** A call failed: its acknowledgements are tried again unless let go since or failing for too long. */
    private void failed(List<Ack> sent, Throwable error) {
        failedRemovals.addAndGet(sent.size());
        long now = System.nanoTime();
        int again = 0;
        int givenUp = 0;
        for (Ack ack : sent) {
            Ack failed = ack.failedAt(now);
            if (letGoSince(failed)) {
                continue;
            }
            if (now - failed.failingSince() > retryForNanos || retryCount.get() >= MAX_RETRIES) {
                givenUp++;
                continue;
            }
            retryCount.incrementAndGet();
            // The list is changed only inside compute, and owned by whoever removed it from the map.
            retries.compute(failed.clientId(), (client, waiting) -> {
                List<Ack> list = waiting == null ? new ArrayList<>() : waiting;
                list.add(failed);
                return list;
            });
            again++;
        }
        done(sent.size() - again);
        if (givenUp > 0) {
            this.givenUp.addAndGet(givenUp);
            LOG.warnf("gave up removing %d acknowledged messages after %d s of failures (tbmq.persistence.acknowledgement-retry) or with %d"
                    + " waiting (they come again, with DUP): %s", givenUp, TimeUnit.NANOSECONDS.toSeconds(retryForNanos), MAX_RETRIES,
                    error.getMessage());
        }
        if (again > 0) {
            FAILED.info("removing %d acknowledged messages failed (tried again): %s", again, error.getMessage());
            if (retryArmed.compareAndSet(false, true)) {
                redis.after(retryDelay.getAndUpdate(d -> Math.min(2 * d, LAST_RETRY_NANOS)), () -> {
                    retryArmed.set(false);
                    send(true, null);
                });
            }
        }
    }

    /**
     * The node stops: sends what is gathered and what waits to be tried again, and waits up to
     * {@code timeout} for Redis to take it (a call that fails is still tried again on its timer
     * meanwhile). Returns how many are left not done with.
     */
    int finish(Duration timeout) {
        send(true, null);
        redis.flushNow();
        return Countdown.awaitZero(outstanding::get, timeout);
    }

    /** Done with: removed, given up, or dropped after a let-go. */
    private void done(int count) {
        outstanding.addAndGet(-count);
    }

    /** Not done with yet, for tests: gathered, in a call, or waiting to be tried again. */
    int outstanding() {
        return outstanding.get();
    }

    /** Acknowledgements whose removal failed, each time it did, for tests. */
    long failedRemovals() {
        return failedRemovals.get();
    }

    /** Acknowledgements whose removal was given up: their messages come again, with DUP, when the session loads. */
    long givenUp() {
        return givenUp.get();
    }

    /** The clients a remove.lua call on one master left out (the 1-based positions in its second element). */
    private static List<String> leftOut(List<String> clients, Object result) {
        List<String> out = new ArrayList<>();
        for (Object position : (List<?>) ((List<?>) result).get(1)) {
            out.add(clients.get((int) (long) (Long) position - 1));
        }
        return out;
    }

    private static byte[] num(long n) {
        return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
    }
}
