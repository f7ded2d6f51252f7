package io.tbmq.operator.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.MigrateArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * Talks to the Redis pods of one cluster for one reconcile: observes each node and carries out one
 * {@link SlotStep}. Slots are moved the way redis-cli does it (IMPORTING on the target, MIGRATING on
 * the source, MIGRATE of every key, then NODE on both), pipelined across a round of a few dozen slots, so
 * keys stay readable throughout: a client asking the source for a moved key is redirected (ASK).
 */
public final class RedisClusterAdmin implements AutoCloseable {
    public static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final int KEYS_PER_MIGRATE = 100;
    /** Connections tried with one password while Lettuce loses Redis' answer to the handshake (see handshakeAnswerLost). */
    private static final int HANDSHAKE_ATTEMPTS = 5;
    /** How long a CLUSTER MEET may take to show (Redis runs the handshake from its 100 ms cron). */
    static final Duration MEET_TAKES = Duration.ofSeconds(3);
    /**
     * Slots opened (MIGRATING) at a time; see moveRound. Small enough that a round takes tens of
     * milliseconds, large enough that the pipelined commands of a 1024-slot step need few rounds.
     */
    static final int SLOTS_PER_ROUND = 64;
    /** How long a removed master's reset waits for its clients to let go: over two of the brokers' 5 s periodic topology refreshes. */
    static final Duration LET_GO = Duration.ofSeconds(12);

    /** Event loops and timers shared by every admin session: creating them per reconcile costs more than the work. */
    private static final ClientResources RESOURCES = DefaultClientResources.builder().ioThreadPoolSize(2)
            .computationThreadPoolSize(2).build();

    private final RedisClient client = RedisClient.create(RESOURCES);
    private final Map<Integer, StatefulRedisConnection<byte[], byte[]>> connections = new HashMap<>();
    /** The password each open connection authenticated with (absent: none). */
    private final Map<Integer, String> passwordsUsed = new HashMap<>();
    private final List<String> passwords;
    private final Duration timeout;

    public RedisClusterAdmin(String password) {
        this(password, TIMEOUT);
    }

    public RedisClusterAdmin(String password, Duration timeout) {
        this(Collections.singletonList(password), timeout);
    }

    /**
     * With {@code timeout} bounding each connect and each command: a short one for a glance at pods
     * that may not answer (one on a node that is down keeps its IP for minutes and drops the SYN).
     * {@code passwords} are tried in turn on each node until one is taken (null or empty: none):
     * while a password changes, a node restarted meanwhile knows only the new one.
     */
    public RedisClusterAdmin(List<String> passwords, Duration timeout) {
        this.passwords = passwords.isEmpty() ? List.of("") : List.copyOf(new LinkedHashSet<>(
                passwords.stream().map(p -> p == null ? "" : p).toList()));
        this.timeout = timeout;
        client.setOptions(ClientOptions.builder().socketOptions(SocketOptions.builder().connectTimeout(timeout).build()).build());
        client.setDefaultTimeout(timeout);
    }

    public NodeState observe(RedisNode node) {
        String nodes = sync(node).clusterNodes();
        return ClusterNodesParser.parse(node, nodes);
    }

    /**
     * Turns on the append-only file on a running node that runs without it (a pod started from an older configuration); returns whether it had to. At run
     * time because restarting a node whose configuration newly says {@code appendonly yes} would
     * start it empty: Redis then reads only the (absent) append-only file, not its snapshot.
     */
    public boolean ensureAppendOnly(RedisNode node) {
        var commands = sync(node);
        if ("yes".equals(commands.configGet("appendonly").get("appendonly"))) {
            return false;
        }
        // Redis writes the current data set to the new file in the background before appending to it.
        commands.configSet("appendonly", "yes");
        return true;
    }

    /**
     * Sets the append-only file's fsync policy ({@code always}, {@code everysec}) on a running node
     * that has another; returns whether it had to. At run time because a ConfigMap change restarts
     * no pod, and a restart is not needed for it.
     */
    public boolean ensureFsync(RedisNode node, String policy) {
        var commands = sync(node);
        if (policy.equals(commands.configGet("appendfsync").get("appendfsync"))) {
            return false;
        }
        commands.configSet("appendfsync", policy);
        return true;
    }

    /**
     * Sets {@code cluster-require-full-coverage no} on a running node started from an older
     * configuration (a ConfigMap change restarts no pod); returns whether it had to. Every key is one
     * client's, so a master that is gone should stop only its own slots, not the whole cluster.
     */
    public boolean ensurePartialCoverage(RedisNode node) {
        var commands = sync(node);
        if ("no".equals(commands.configGet("cluster-require-full-coverage").get("cluster-require-full-coverage"))) {
            return false;
        }
        commands.configSet("cluster-require-full-coverage", "no");
        return true;
    }

    /** Whether the node considers the cluster usable (it reaches a majority of the masters serving slots). */
    public boolean clusterStateOk(RedisNode node) {
        return info(node).stateOk();
    }

    public ClusterInfo info(RedisNode node) {
        return ClusterInfo.parse(sync(node).clusterInfo());
    }

    public MemoryUse memory(RedisNode node) {
        return MemoryUse.parse(sync(node).info("memory"));
    }

    /**
     * Sends the CLUSTER MEETs and waits until the node that met lists every newcomer where it is now
     * (the handshake has run); returns whether it did within {@link #MEET_TAKES}. A pass that observed
     * again at once would find the old entry still there and meet again and again.
     */
    public boolean meet(SlotStep.Meet meet) {
        meet.newcomers().forEach(n -> sync(meet.via().node()).clusterMeet(n.node().host(), n.node().port()));
        return awaitMet(meet);
    }

    private boolean awaitMet(SlotStep.Meet meet) {
        long until = System.nanoTime() + MEET_TAKES.toNanos();
        while (true) {
            NodeState via = observe(meet.via().node());
            if (meet.newcomers().stream().allMatch(via::listsWhereItIs)) {
                return true;
            }
            if (System.nanoTime() > until) {
                return false;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** Carries out the step, {@code everyone} being all the pods observed; returns what it did, for Events. */
    public String execute(SlotStep step, List<NodeState> everyone) {
        switch (step) {
            case SlotStep.Meet meet -> {
                if (!meet(meet)) {
                    return meet.describe() + " (not taken in " + MEET_TAKES.toSeconds() + " s yet)";
                }
            }
            case SlotStep.Assign assign -> assign.slots().forEach((node, slots) ->
                    sync(node.node()).clusterAddSlots(slots.stream().toArray()));
            case SlotStep.Move move -> move(move.source(), move.target(), move.slots(), everyone);
            case SlotStep.Forget forget -> {
                return forget.describe() + forget(forget.members(), forget.removed());
            }
            case SlotStep.AwaitGossip await -> {
            }
            case SlotStep.Done done -> {
            }
        }
        return step.describe();
    }

    private void move(NodeState source, NodeState target, BitSet slots, List<NodeState> everyone) {
        int[] all = slots.stream().toArray();
        for (int from = 0; from < all.length; from += SLOTS_PER_ROUND) {
            moveRound(source, target, Arrays.copyOfRange(all, from, Math.min(all.length, from + SLOTS_PER_ROUND)), everyone);
        }
    }

    /**
     * Moves a round of slots completely before the next round opens. While a slot is MIGRATING the
     * brokers' scripts that create keys in it are refused (TRYAGAIN, "non local key") and retried,
     * so a slot must stay open for as short a time as possible: a round, not a whole step.
     */
    private void moveRound(NodeState source, NodeState target, int[] list, List<NodeState> everyone) {
        var src = connection(source.node()).async();
        var dst = connection(target.node()).async();
        await(list, slot -> dst.clusterSetSlotImporting(slot, source.id()));
        await(list, slot -> src.clusterSetSlotMigrating(slot, target.id()));
        RedisCommands<byte[], byte[]> srcSync = sync(source.node());
        // Ask for every slot's first keys in one pipelined batch; most slots of a young cluster are empty.
        List<RedisFuture<List<byte[]>>> firstKeys = new ArrayList<>(list.length);
        for (int slot : list) {
            firstKeys.add(src.clusterGetKeysInSlot(slot, KEYS_PER_MIGRATE));
        }
        LettuceFutures.awaitAll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS, firstKeys.toArray(new RedisFuture[0]));
        for (int i = 0; i < list.length; i++) {
            List<byte[]> keys = firstKeys.get(i).toCompletableFuture().join();
            while (!keys.isEmpty()) {
                MigrateArgs<byte[]> args = MigrateArgs.Builder.<byte[]> keys(keys).replace();
                String password = passwordsUsed.get(target.node().ordinal());
                if (password != null) {
                    // AUTH with the user name: the one-argument form is refused by a node that asks for no password.
                    args.auth2("default", password);
                }
                srcSync.migrate(target.node().host(), target.node().port(), 0, TIMEOUT.toMillis(), args);
                keys = srcSync.clusterGetKeysInSlot(list[i], KEYS_PER_MIGRATE);
            }
        }
        // The target first: once it owns the slot, the source's redirects point to the right place.
        await(list, slot -> dst.clusterSetSlotNode(slot, target.id()));
        await(list, slot -> src.clusterSetSlotNode(slot, target.id()));
        // Tell every other master now rather than through gossip, so that a master removed right after
        // this leaves nobody with a stale owner for these slots; all of them at once.
        List<RedisFuture<String>> told = new ArrayList<>();
        for (NodeState other : everyone) {
            if (other.equals(source) || other.equals(target) || !other.known().contains(target.id())) {
                continue;
            }
            var async = connection(other.node()).async();
            for (int slot : list) {
                told.add(async.clusterSetSlotNode(slot, target.id()));
            }
        }
        awaitAll(told);
    }

    /** Returns how the removed masters' clients let go, for the Event. */
    private String forget(List<NodeState> members, List<NodeState> removed) {
        for (NodeState gone : removed) {
            for (NodeState m : members) {
                if (m.lists(gone)) {
                    sync(m.node()).clusterForget(gone.id());
                }
            }
        }
        String waited = awaitClientsLetGo(removed);
        // Served nothing and holds no keys: a hard reset gives it a new id so it can never rejoin by gossip.
        removed.forEach(gone -> sync(gone.node()).clusterReset(true));
        return waited;
    }

    /**
     * Until it is reset a removed master answers a command for a slot it gave away with MOVED, which a
     * client (the brokers' Lettuce) follows and takes as a cue to refresh its slot map. Reset at once,
     * it would answer "CLUSTERDOWN Hash slot not served", which no client takes as a redirect: a broker
     * still mapping a slot to it fails those commands until its next periodic refresh, then with "not
     * connected" once the pod is gone (seen on a real node). So the reset waits until no client but
     * this admin is connected to any removed master, or {@link #LET_GO} at most.
     */
    private String awaitClientsLetGo(List<NodeState> removed) {
        long start = System.nanoTime();
        long deadline = start + LET_GO.toNanos();
        int connected;
        while ((connected = removed.stream().mapToInt(this::otherClients).sum()) > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        String waited = String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - start) / 1e9);
        // Lettuce keeps a removed master in its topology, and its connection open, until the master is
        // reset: what counts is that every client refreshed its slot map meanwhile (every 5 s, the brokers).
        return connected == 0 ? " (its clients let go within " + waited + ")"
                : " (reset after " + waited + ", long enough for its " + connected + " clients to refresh their slot maps)";
    }

    /** Ordinary client connections to the node other than this admin's (replication links excluded). */
    int otherClients(NodeState node) {
        var commands = sync(node.node());
        String self = "id=" + commands.clientId() + " ";
        return (int) commands.clientList().lines()
                .filter(l -> !l.startsWith(self) && l.contains(" flags=N ")).count();
    }

    private interface SlotCommand {
        RedisFuture<String> apply(int slot);
    }

    private static void await(int[] slots, SlotCommand command) {
        List<RedisFuture<String>> futures = new ArrayList<>(slots.length);
        for (int slot : slots) {
            futures.add(command.apply(slot));
        }
        awaitAll(futures);
    }

    private static void awaitAll(List<RedisFuture<String>> futures) {
        if (!LettuceFutures.awaitAll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS, futures.toArray(new RedisFuture[0]))) {
            throw new IllegalStateException("Redis did not answer within " + TIMEOUT);
        }
        for (RedisFuture<String> f : futures) {
            if (f.getError() != null) {
                throw new IllegalStateException(f.getError());
            }
        }
    }

    private RedisCommands<byte[], byte[]> sync(RedisNode node) {
        return connection(node).sync();
    }

    private StatefulRedisConnection<byte[], byte[]> connection(RedisNode node) {
        StatefulRedisConnection<byte[], byte[]> open = connections.get(node.ordinal());
        if (open != null) {
            return open;
        }
        RedisConnectionException refused = null;
        for (String password : passwords) {
            RedisURI.Builder uri = RedisURI.builder().withHost(node.host()).withPort(node.port()).withTimeout(timeout);
            if (!password.isEmpty()) {
                uri.withPassword(password.toCharArray());
            }
            for (int attempt = 1;; attempt++) {
                try {
                    StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE, uri.build());
                    connections.put(node.ordinal(), connection);
                    if (!password.isEmpty()) {
                        passwordsUsed.put(node.ordinal(), password);
                    }
                    return connection;
                } catch (RedisConnectionException e) {
                    if (handshakeAnswerLost(e) && attempt < HANDSHAKE_ATTEMPTS) {
                        pause(10L * attempt);
                        continue;
                    }
                    if (!refusedAuthentication(e)) {
                        throw e; // not there at all: another password would not help
                    }
                    refused = e;
                    break;
                }
            }
        }
        throw refused;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Lettuce 6.8 reports a handshake Redis refused (WRONGPASS, NOAUTH) as "RedisHandshakeHandler not
     * registered" when the refusal and the channel's close come before it looks at the pipeline: about
     * one refused connection in fifty on an idle machine, never an accepted one. Asked again, Redis
     * says why.
     */
    static boolean handshakeAnswerLost(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IllegalStateException && t.getMessage() != null && t.getMessage().contains("RedisHandshakeHandler not registered")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Redis refused the connection's AUTH (or HELLO): it is there, and wants another password
     * (WRONGPASS; NOAUTH; or "AUTH ... called without any password configured" from a node with none).
     */
    private static boolean refusedAuthentication(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException && t.getMessage() != null
                    && (t.getMessage().contains("WRONGPASS") || t.getMessage().contains("NOAUTH") || t.getMessage().contains("AUTH"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Makes the node accept each of {@code passwords} as well as the ones it accepts now (Redis 6's
     * ACL: the default user may have several), and authenticate with the first to its master.
     */
    public void acceptPasswords(RedisNode node, String... passwords) {
        var commands = sync(node);
        AclSetuserArgs args = AclSetuserArgs.Builder.on();
        for (String password : passwords) {
            args.addPassword(password);
        }
        commands.aclSetuser("default", args);
        commands.configSet("masterauth", passwords[0]);
    }

    /** Makes the node accept any client, with or without a password (as a node started without one does). */
    public void acceptAnyPassword(RedisNode node) {
        sync(node).aclSetuser("default", AclSetuserArgs.Builder.on().nopass());
    }

    /** Makes the node accept {@code password} and no other (none either), in one command. */
    public void requirePassword(RedisNode node, String password) {
        var commands = sync(node);
        commands.aclSetuser("default", AclSetuserArgs.Builder.on().resetpass().addPassword(password));
        commands.configSet("masterauth", password);
    }

    /** How a node takes one password: the only way in, one of several (or beside none), or not at all. */
    public enum Acceptance {
        ONLY, AMONG_OTHERS, REFUSED
    }

    /**
     * How {@code node} takes this admin's one password (an admin made to check it): whether it takes
     * anything else too (another password, or none), read from its default user. Throws when the node
     * does not answer at all.
     */
    public Acceptance acceptance(RedisNode node) {
        if (passwords.size() != 1) {
            throw new IllegalStateException("an admin made with one password checks it");
        }
        DefaultUser user;
        try {
            user = defaultUser(node);
        } catch (RedisConnectionException e) {
            if (refusedAuthentication(e)) {
                return Acceptance.REFUSED;
            }
            throw e;
        }
        return user.acceptsOnly(passwords.get(0)) ? Acceptance.ONLY : Acceptance.AMONG_OTHERS;
    }

    /**
     * Makes {@code node} take {@code password} only when it takes another one too, or none (left from
     * a change interrupted before its last step, or re-opened by an operator that ran beside this
     * one); returns whether it had to.
     */
    public boolean closeAllBut(RedisNode node, String password) {
        if (defaultUser(node).acceptsOnly(password)) {
            return false;
        }
        requirePassword(node, password);
        return true;
    }

    /** The default user's flags and password hashes (ACL GETUSER: SHA-256 in hex, never the passwords). */
    record DefaultUser(List<String> flags, List<String> passwordHashes) {
        boolean acceptsOnly(String password) {
            return !flags.contains("nopass") && passwordHashes.equals(List.of(sha256(password)));
        }
    }

    private DefaultUser defaultUser(RedisNode node) {
        List<Object> reply = sync(node).aclGetuser("default");
        List<String> flags = List.of();
        List<String> hashes = List.of();
        for (int i = 0; i + 1 < reply.size(); i += 2) {
            String field = text(reply.get(i));
            if ("flags".equals(field)) {
                flags = texts(reply.get(i + 1));
            } else if ("passwords".equals(field)) {
                hashes = texts(reply.get(i + 1));
            }
        }
        return new DefaultUser(flags, hashes);
    }

    private static List<String> texts(Object list) {
        return list instanceof List<?> l ? l.stream().map(RedisClusterAdmin::text).toList() : List.of();
    }

    private static String text(Object value) {
        return value instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    static String sha256(String password) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(password.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        connections.values().forEach(StatefulRedisConnection::close);
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2)); // leaves the shared resources running
    }
}
