package io.tbmq.broker.persistence.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Persistent sessions of DEVICE clients in Redis (standalone or Cluster), through the Lua scripts
 * next to this class: store (with the limit trim and replay protection), load (with the cleanup of
 * expired references), remove on PUBACK/PUBCOMP, mark released on PUBREC, clear on session end.
 *
 * <p>Script calls serve many clients where Redis allows it: on standalone Redis one call stores
 * (or removes) the messages of every client in a batch; on a Cluster one call per master for the
 * clients whose slots it serves ({@code tbmq.redis.calls-per-master}), else one per client, or per
 * slot group when {@code tbmq.redis.slot-groups} is on. A call per master declares no keys (Redis
 * would refuse keys of several slots) and the script checks each client's slot first; a client
 * whose slot moved is sent again in a call of its own, which Lettuce routes and Redis redirects.
 * Acknowledgements are gathered for one flush interval and nothing waits for them; a removal that
 * fails is tried again ({@link Acknowledgements}).
 */
public final class DeviceMessageStore {
    /** Messages in one script call at most, so a large backlog never blocks Redis for long. */
    private static final int MAX_MESSAGES_PER_CALL = 500;
    /**
     * How long a load waits for its client's removals, and for how many generations of them (each
     * sent anew by an answer of the one before): a slot's move sends one anew once (a redirect and a
     * NOSCRIPT's EVAL are within one call); more mean the slot keeps moving.
     */
    private static final long REMOVALS_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final int REMOVALS_ROUNDS = 4;
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(DeviceMessageStore.class);
    private static final io.tbmq.broker.util.RateLimitedLog FAILED = new io.tbmq.broker.util.RateLimitedLog(LOG, 1);

    private final RedisConnector redis;
    private final RedisKeys keys;
    private final int limit;
    private final boolean anyKeysInOneCall;
    private final boolean callsPerMaster;
    private final LuaScript add = LuaScript.load("add");
    private final LuaScript load = LuaScript.load("load");
    private final LuaScript remove = LuaScript.load("remove");
    private final LuaScript release = LuaScript.load("release");
    private final LuaScript delivered = LuaScript.load("delivered");
    private final LuaScript clear = LuaScript.load("clear");
    private final Acknowledgements acknowledgements;

    /**
     * A message to store: its source position (for replay protection), time to live and value.
     * {@code viaPartition} is the partition of tbmq.msg.persisted it was read from: a replay is
     * recognised by its source offset within one source partition read through one persisted
     * partition. Both are needed because one client's messages of one source partition arrive through
     * two persisted partitions once partitions are added (the client's key maps to another), and those
     * two are read independently: a newer source offset stored through the new partition first must
     * not make the older ones still queued in the old partition look like replays.
     */
    public record Incoming(int sourcePartition, int viaPartition, long sourceOffset, long ttlSeconds, byte[] value) {
        /** The name the store keeps the last applied offset under. */
        String stream() {
            return sourcePartition + "/" + viaPartition;
        }
    }

    /** Where a message was stored; packet id 0 means it had been stored before (a replay) and was skipped. */
    public record Assigned(int packetId, long score) {
    }

    /**
     * What a client has stored, in order; {@code lastScore} is the highest score ever assigned to
     * it: every message up to it is either here or gone for good (acknowledged, expired, trimmed).
     */
    public record Loaded(long deliveredScore, long lastScore, List<Entry> entries) {
    }

    /** One stored message; {@code value} is null when only PUBREL is owed. */
    public record Entry(long score, int packetId, byte[] value) {
        public boolean released() {
            return value == null;
        }
    }

    public DeviceMessageStore(RedisConnector redis, RedisKeys keys, int limit) {
        this(redis, keys, limit, true);
    }

    public DeviceMessageStore(RedisConnector redis, RedisKeys keys, int limit, boolean callsPerMaster) {
        this(redis, keys, limit, callsPerMaster, Acknowledgements.DEFAULT_RETRY);
    }

    /** {@code acknowledgementRetry}: how long a removal of acknowledged messages that fails is tried again. */
    public DeviceMessageStore(RedisConnector redis, RedisKeys keys, int limit, boolean callsPerMaster, Duration acknowledgementRetry) {
        this(redis, keys, limit, !redis.cluster(), callsPerMaster && redis.cluster(), acknowledgementRetry);
    }

    /** {@code anyKeysInOneCall}: Redis is standalone, so a script may touch keys of any slot. */
    DeviceMessageStore(RedisConnector redis, RedisKeys keys, int limit, boolean anyKeysInOneCall, boolean callsPerMaster) {
        this(redis, keys, limit, anyKeysInOneCall, callsPerMaster, Acknowledgements.DEFAULT_RETRY);
    }

    private DeviceMessageStore(RedisConnector redis, RedisKeys keys, int limit, boolean anyKeysInOneCall, boolean callsPerMaster,
            Duration acknowledgementRetry) {
        if (acknowledgementRetry.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("tbmq.persistence.acknowledgement-retry must be at least 1s, got " + acknowledgementRetry);
        }
        if (limit > 0xFFFF) {
            throw new IllegalArgumentException("tbmq.persistence.device-messages-limit can't be greater than 65535 (packet ids are 16 bits)");
        }
        if (limit < 1) {
            throw new IllegalArgumentException("tbmq.persistence.device-messages-limit must be at least 1");
        }
        this.redis = redis;
        this.keys = keys;
        this.limit = limit;
        this.anyKeysInOneCall = anyKeysInOneCall;
        this.callsPerMaster = callsPerMaster;
        this.acknowledgements = new Acknowledgements(redis, keys, remove, this::callGroup, this::bySlot, acknowledgementRetry);
    }

    /** Which script call a client's keys can join: all in one on standalone, by master or by slot on a Cluster. */
    private Object callGroup(String clientId) {
        if (anyKeysInOneCall) {
            return Boolean.TRUE;
        }
        if (callsPerMaster) {
            // The clients of one call on a master: by the slots the broker last knew it to serve.
            RedisConnector.Master master = redis.masterOf(keys.messages(clientId));
            if (master != null) {
                return master;
            }
        }
        return bySlot(clientId);
    }

    /** The call a client's keys can join when sent where Redis redirects them: its own slot (or slot group). */
    private Object bySlot(String clientId) {
        return keys.slotGroups() == 0 ? clientId : Integer.valueOf(keys.group(clientId));
    }

    public RedisKeys keys() {
        return keys;
    }

    /**
     * Stores the messages of many clients: one script call for all on standalone Redis; on a
     * Cluster one per master, else one per client or slot group. {@code connected} clients get
     * their messages marked as delivered. A client missing from the result was not stored.
     */
    public CompletableFuture<Map<String, List<Assigned>>> add(Map<String, List<Incoming>> byClient,
            java.util.function.Predicate<String> connected) {
        List<CompletableFuture<Map<String, List<Assigned>>>> futures = addEach(byClient, connected);
        return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<String, List<Assigned>> all = new HashMap<>();
            futures.forEach(f -> all.putAll(f.join()));
            return all;
        });
    }

    /**
     * The same as {@link #add}, one future per script call (a client's messages are all in one call),
     * so that the clients of a call that is done need not wait for a call held up by a moving slot.
     * A future may leave clients out: those whose call on their master failed, or whose slot moved
     * and whose call of their own failed too. They were not stored; the caller tries them again.
     * (The clients of a call on a master wait for those of them it sends again, which is rare: a
     * slot moved since the broker last read the topology.)
     */
    public List<CompletableFuture<Map<String, List<Assigned>>>> addEach(Map<String, List<Incoming>> byClient,
            java.util.function.Predicate<String> connected) {
        Map<Object, List<String>> calls = new LinkedHashMap<>();
        for (String client : byClient.keySet()) {
            calls.computeIfAbsent(callGroup(client), g -> new ArrayList<>()).add(client);
        }
        List<CompletableFuture<Map<String, List<Assigned>>>> futures = new ArrayList<>();
        for (Map.Entry<Object, List<String>> call : calls.entrySet()) {
            // Split very large calls; a client's messages stay together and in order.
            List<String> chunk = new ArrayList<>();
            int messages = 0;
            for (String client : call.getValue()) {
                if (!chunk.isEmpty() && messages + byClient.get(client).size() > MAX_MESSAGES_PER_CALL) {
                    futures.add(tracked(call.getKey(), chunk, byClient, connected));
                    chunk = new ArrayList<>();
                    messages = 0;
                }
                chunk.add(client);
                messages += byClient.get(client).size();
            }
            futures.add(tracked(call.getKey(), chunk, byClient, connected));
        }
        // The calls are the batch: a poll's writes go out now, not one flush interval later.
        redis.flushNow();
        return futures;
    }

    /** A call that fails to go out fails its future, rather than the calls before it losing theirs. */
    private CompletableFuture<Map<String, List<Assigned>>> tracked(Object group, List<String> clients,
            Map<String, List<Incoming>> byClient, java.util.function.Predicate<String> connected) {
        try {
            return addCall(group, clients, byClient, connected);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Map<String, List<Assigned>>> addCall(Object group, List<String> clients,
            Map<String, List<Incoming>> byClient, java.util.function.Predicate<String> connected) {
        byte[][] keyArray = new byte[clients.size() * 2][];
        for (int c = 0; c < clients.size(); c++) {
            keyArray[2 * c] = keys.messages(clients.get(c));
            keyArray[2 * c + 1] = keys.lastPacketId(clients.get(c));
        }
        List<byte[]> args = new ArrayList<>();
        args.add(num(limit));
        args.add(num(clients.size()));
        if (group instanceof RedisConnector.Master) {
            args.addAll(List.of(keyArray));
        }
        for (int c = 0; c < clients.size(); c++) {
            String client = clients.get(c);
            List<Incoming> messages = byClient.get(client);
            args.add(keys.messagePrefix(client));
            args.add(num(connected.test(client) ? 1 : 0));
            args.add(num(messages.size()));
            for (Incoming m : messages) {
                args.add(m.stream().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                args.add(num(m.sourceOffset()));
                args.add(num(Math.max(1, m.ttlSeconds())));
                args.add(m.value());
            }
        }
        if (!(group instanceof RedisConnector.Master master)) {
            return redis.script(add, keyArray, args.toArray(byte[][]::new)).thenApply(result -> assigned(clients, result, null));
        }
        return redis.scriptOn(master, add, args.toArray(byte[][]::new)).handle((result, error) -> {
            List<String> elsewhere = new ArrayList<>();
            // A failed call: each client goes on its own. If it ran after all (a reply lost), the
            // store's replay protection skips what it stored, as for any batch read again.
            Map<String, List<Assigned>> out = error == null ? assigned(clients, result, elsewhere) : new HashMap<>();
            if (error != null) {
                elsewhere.addAll(clients);
            }
            if (elsewhere.isEmpty()) {
                return CompletableFuture.completedFuture(out);
            }
            // Their slots moved since the topology was read: each where Redis now redirects it. One
            // that fails is left out of the result, so that the caller does not take the others
            // for unstored too (storing them again would find them applied and not hand them on).
            List<CompletableFuture<Map<String, List<Assigned>>>> again = new ArrayList<>();
            for (String client : elsewhere) {
                again.add(addCall(bySlot(client), List.of(client), byClient, connected).exceptionally(e -> {
                    FAILED.info("storing the messages of a client whose slot moved failed (tried again): %s", e.getMessage());
                    return Map.of();
                }));
            }
            redis.flushNow();
            return CompletableFuture.allOf(again.toArray(CompletableFuture[]::new)).thenApply(v -> {
                again.forEach(f -> out.putAll(f.join()));
                return out;
            });
        }).thenCompose(f -> f);
    }

    /** The packet ids and scores per client of an add.lua result; a client the script left out (-1) goes into {@code elsewhere}. */
    private static Map<String, List<Assigned>> assigned(List<String> clients, Object result, List<String> elsewhere) {
        Map<String, List<Assigned>> out = new HashMap<>();
        List<?> perClient = (List<?>) result;
        for (int c = 0; c < clients.size(); c++) {
            if (!(perClient.get(c) instanceof List<?> pairs)) {
                if (elsewhere == null) {
                    throw new IllegalStateException("add.lua left out " + clients.get(c) + " of a call with its keys declared");
                }
                elsewhere.add(clients.get(c));
                continue;
            }
            List<Assigned> assigned = new ArrayList<>(pairs.size() / 2);
            for (int i = 0; i < pairs.size(); i += 2) {
                assigned.add(new Assigned((int) (long) (Long) pairs.get(i), (Long) pairs.get(i + 1)));
            }
            out.put(clients.get(c), assigned);
        }
        return out;
    }

    public CompletableFuture<Loaded> load(String clientId) {
        // Acknowledgements gathered so far, and the client's own waiting to be tried again, go first,
        // and the load waits for the client's to be answered: what it acknowledged is not loaded again.
        CompletableFuture<Void> removals = afterRemovals(clientId, acknowledgements.flushFor(clientId),
                System.nanoTime() + REMOVALS_WAIT_NANOS, 1);
        if (removals.isDone()) {
            return loadNow(clientId);
        }
        redis.flushNow();
        return removals.thenCompose(answered -> loadNow(clientId));
    }

    /**
     * Completes once {@code removals}, and whatever their answers sent anew, are answered: an answer
     * may send a removal again, to the slot's new master (which may answer NOSCRIPT and take it again
     * as EVAL). Such a one is tracked before the answer counts, so a future that is done and still the
     * client's latest (or none left) means none was. A removal that failed meanwhile waits for its
     * retry; the load does not send it again at once, which would press a Redis that is failing over
     * with one call per reconnecting client.
     */
    private CompletableFuture<Void> afterRemovals(String clientId, CompletableFuture<Void> removals, long deadline, int round) {
        CompletableFuture<Void> waited = removals;
        int rounds = round;
        while (waited.isDone()) {
            CompletableFuture<Void> latest = acknowledgements.inFlight(clientId);
            if (latest == waited || latest == Acknowledgements.NONE_IN_FLIGHT) {
                return latest;
            }
            waited = latest;
            rounds++;
            if (rounds > REMOVALS_ROUNDS) {
                break;
            }
        }
        long remaining = deadline - System.nanoTime();
        if (rounds > REMOVALS_ROUNDS || remaining <= 0) {
            // Past the bound a slot keeps moving or Redis is failing: the session loads anyway, and what
            // was acknowledged may come again, with DUP.
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> next = waited;
        int nextRound = rounds;
        // A copy: the future is shared with other loads of the client, which the timeout must not release.
        return next.copy().completeOnTimeout(null, remaining, TimeUnit.NANOSECONDS)
                .thenCompose(answered -> next.isDone() ? afterRemovals(clientId, next, deadline, nextRound)
                        : CompletableFuture.completedFuture(null));
    }

    private CompletableFuture<Loaded> loadNow(String clientId) {
        byte[][] keyArray = {keys.messages(clientId), keys.lastPacketId(clientId)};
        CompletableFuture<Loaded> loaded = redis.script(load, keyArray).thenApply(result -> {
            List<?> flat = (List<?>) result;
            long deliveredScore = Long.parseLong(text(flat.get(0)));
            long lastScore = Long.parseLong(text(flat.get(1)));
            List<Entry> entries = new ArrayList<>((flat.size() - 2) / 3);
            for (int i = 2; i + 2 < flat.size(); i += 3) {
                long score = (long) Double.parseDouble(text(flat.get(i)));
                String key = text(flat.get(i + 1));
                int packetId = Integer.parseInt(key.substring(key.lastIndexOf('_') + 1));
                byte[] value = (byte[]) flat.get(i + 2);
                boolean released = value.length == 1 && value[0] == 'R';
                entries.add(new Entry(score, packetId, released ? null : value));
            }
            return new Loaded(deliveredScore, lastScore, entries);
        });
        // A connecting client waits for this one.
        redis.flushNow();
        return loaded;
    }

    /** PUBACK or PUBCOMP: the message is done. Sent with others within a flush interval; tried again if that fails. */
    public void acknowledge(String clientId, int packetId) {
        acknowledgements.add(clientId, packetId);
    }

    /**
     * The client connected to another node, which holds its session now (and may clear it): this
     * node's acknowledgements of it not yet removed are dropped, not tried again.
     */
    public void letGo(String clientId) {
        acknowledgements.letGo(clientId);
    }

    /**
     * The node stops and no client can acknowledge any more: the acknowledgements not yet removed
     * (gathered, or failed and waiting to be tried again) are sent now, and this waits up to
     * {@code timeout} for Redis to take them. Returns how many it did not take: those messages come
     * again, with DUP, when their clients reconnect.
     */
    public int finish(Duration timeout) {
        return acknowledgements.finish(timeout);
    }

    /** Sends the gathered acknowledgements now. */
    void flushAcks() {
        acknowledgements.flush();
    }

    /** Acknowledgements not done with yet, for tests: gathered, in a call, or waiting to be tried again. */
    int outstandingAcks() {
        return acknowledgements.outstanding();
    }

    /** Acknowledgements whose removal failed, each time it did, for tests. */
    long failedRemovals() {
        return acknowledgements.failedRemovals();
    }

    /**
     * Acknowledgements whose removal was given up after failing for {@code tbmq.persistence.acknowledgement-retry}:
     * their messages come again, with DUP, when the session loads.
     */
    public long acknowledgementsGivenUp() {
        return acknowledgements.givenUp();
    }

    /** PUBREC: only the PUBREL is owed now. */
    public CompletableFuture<Object> release(String clientId, int packetId) {
        return redis.script(release, new byte[][] {keys.messages(clientId)}, keys.message(clientId, packetId));
    }

    /** Everything up to {@code score} has been sent at least once. */
    public CompletableFuture<Object> delivered(String clientId, long score) {
        return redis.script(delivered, new byte[][] {keys.lastPacketId(clientId)}, num(score));
    }

    /** The session ended: all of the client's keys go. */
    public CompletableFuture<Object> clear(String clientId) {
        // A late acknowledgement must not remove a message of the next session under the same packet id.
        acknowledgements.letGo(clientId);
        acknowledgements.flush();
        return redis.script(clear, new byte[][] {keys.messages(clientId), keys.lastPacketId(clientId), keys.cleared(clientId)});
    }

    private static byte[] num(long n) {
        return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
    }
}
