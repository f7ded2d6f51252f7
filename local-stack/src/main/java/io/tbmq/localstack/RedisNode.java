package io.tbmq.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** One {@code redis-server} process on loopback: standalone, or a member of a {@link RedisCluster}. */
public final class RedisNode implements AutoCloseable {
    private final Path dir;
    private final int port;
    private final boolean clusterMember;
    private final boolean snapshots;
    private List<String> extraArgs = List.of();
    private String appendFsync;
    private ManagedProcess process;

    RedisNode(Path dir, int port, boolean clusterMember, boolean snapshots) {
        this.dir = dir;
        this.port = port;
        this.clusterMember = clusterMember;
        this.snapshots = snapshots;
    }

    /** A standalone Redis on a free port. With {@code snapshots}, RDB saves (as the paper runs it, no AOF). */
    public static RedisNode standalone(Path dir, boolean snapshots) {
        return new RedisNode(dir, Ports.free(), false, snapshots);
    }

    /** A cluster-enabled Redis on a free port (and free bus port) that has joined nothing yet: the operator e2e forms it. */
    public static RedisNode unjoinedClusterMember(Path dir) {
        RedisNode node = new RedisNode(dir, Ports.freeWithBus(), true, false);
        // As the operator's Redis pods run: a master emptied by a scale-down must not turn into a replica.
        node.extraArgs = List.of("--cluster-allow-replica-migration", "no");
        return node;
    }

    /**
     * Every write in an append-only file, fsynced by {@code fsync} ({@code always}: before Redis
     * replies; {@code everysec}: once a second, but written to the file, i.e. to the kernel,
     * before the reply, so a {@code kill -9} of Redis loses nothing it acknowledged either);
     * null for none. Takes effect at the next start.
     */
    public RedisNode appendOnly(String fsync) {
        this.appendFsync = fsync;
        return this;
    }

    public int port() {
        return port;
    }

    public String address() {
        return "127.0.0.1:" + port;
    }

    public ManagedProcess process() {
        return process;
    }

    public RedisNode start(Duration timeout) {
        Path server = Tools.require("redis-server", "redis-server");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("could not create " + dir, e);
        }
        List<String> cmd = new ArrayList<>(List.of(server.toString(),
                "--bind", "127.0.0.1", "--port", Integer.toString(port), "--dir", dir.toString(),
                "--daemonize", "no", "--protected-mode", "no", "--appendonly", appendFsync != null ? "yes" : "no",
                "--appendfsync", appendFsync != null ? appendFsync : "always",
                "--save", snapshots ? "60 1000" : "", "--dbfilename", "dump.rdb"));
        if (clusterMember) {
            cmd.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file", dir.resolve("nodes.conf").toString(),
                    "--cluster-node-timeout", "3000", "--cluster-announce-hostname", "127.0.0.1",
                    // As the operator runs it: a master that is gone stops only its own slots.
                    "--cluster-require-full-coverage", "no"));
        }
        cmd.addAll(extraArgs);
        process = ProcessLauncher.get().start("redis-" + port, cmd, dir, Map.of());
        awaitPing(timeout);
        return this;
    }

    private void awaitPing(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited during start, see " + process.log());
            }
            if (RedisCli.ping(port)) {
                return;
            }
            KafkaNode.sleep(50);
        }
        throw new IllegalStateException("redis-server not answering PING within " + timeout + ", see " + process.log());
    }

    /** Stops with SHUTDOWN semantics (SIGTERM; saves an RDB when snapshots are on). */
    public void stop() {
        if (process != null) {
            process.stop(Duration.ofSeconds(10));
        }
    }

    public void restart(Duration timeout) {
        stop();
        start(timeout);
    }

    @Override
    public void close() {
        stop();
    }
}
