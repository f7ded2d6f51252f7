package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** Real redis-server processes in cluster mode on free local ports, stopped by the process handles started here. */
public final class RedisServers implements AutoCloseable {
    /**
     * The operator's pods' {@code cluster-node-timeout} (RedisModel). A shorter one made the tests
     * flaky: a node that missed the others' pongs for a second on a busy machine counted both other
     * masters as failing and answered "CLUSTERDOWN The cluster is down" (seen in CI).
     */
    static final int NODE_TIMEOUT_MILLIS = 5000;

    private final Path dir;
    private final List<Process> servers = new ArrayList<>();

    public RedisServers(Path dir) {
        this.dir = dir;
    }

    /**
     * Starts {@code count} nodes with ordinals from {@code firstOrdinal}, each on a new free port, and
     * waits until they listen. An ordinal started before keeps its data directory, so it comes back
     * with its nodes.conf (its id, and the others at their addresses of then), as a restarted pod does.
     */
    public List<RedisNode> start(int firstOrdinal, int count) throws IOException, InterruptedException {
        return start(firstOrdinal, count, List.of());
    }

    /** With {@code more} arguments after the usual ones (a password, a user). */
    public List<RedisNode> start(int firstOrdinal, int count, List<String> more) throws IOException, InterruptedException {
        List<RedisNode> nodes = new ArrayList<>();
        for (int i = firstOrdinal; i < firstOrdinal + count; i++) {
            int p = freePort();
            Path data = Files.createDirectories(dir.resolve("redis-" + i));
            List<String> args = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(p), "--bind", "127.0.0.1",
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS), "--cluster-allow-replica-migration", "no",
                    "--cluster-require-full-coverage", "no",
                    "--dir", data.toString(),
                    "--save", "", "--appendonly", "no", "--daemonize", "no"));
            args.addAll(more);
            Process server = new ProcessBuilder(args)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(data.resolve("redis.log").toFile())).start();
            servers.add(server);
            nodes.add(new RedisNode(i, "127.0.0.1", p));
        }
        for (RedisNode n : nodes) {
            long until = System.currentTimeMillis() + 10_000;
            while (!listening(n.port())) {
                assertThat(System.currentTimeMillis()).as("redis-server on %d", n.port()).isLessThan(until);
                Thread.sleep(50);
            }
        }
        return nodes;
    }

    /** Runs one command on {@code node} with redis-cli; returns its output. */
    public static String command(RedisNode node, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", node.host(), "-p", Integer.toString(node.port())));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    /** Stops the {@code index}-th node started (a pod deleted) and waits for it to exit. */
    void stop(int index) throws InterruptedException {
        Process p = servers.get(index);
        p.destroy();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Stops every node started so far and waits for each to exit. */
    void stopAll() throws InterruptedException {
        for (Process p : servers) {
            p.destroy();
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        servers.clear();
    }

    @Override
    public void close() throws InterruptedException {
        for (Process p : servers) {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                // Still writing its append-only file: it must not outlive the test and its directory.
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * What RedisProvisioner does over successive reconciles, until every master wanted says
     * cluster_state:ok and knows every slot's owner; returns the CLUSTER MEET steps it took.
     */
    static List<String> converge(RedisClusterAdmin admin, List<RedisNode> nodes, int masters, int slotsPerStep) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        SlotStep last = null;
        List<String> meets = new ArrayList<>();
        while (System.currentTimeMillis() < deadline) {
            List<NodeState> states = nodes.stream().map(admin::observe).toList();
            last = SlotPlanner.next(states, masters, slotsPerStep);
            if (last instanceof SlotStep.Done) {
                // cluster_state:ok alone let a client read a topology with a slot unowned (seen in CI:
                // "Cannot determine a partition for slot 5462"); see ClusterInfo.
                if (nodes.stream().limit(masters).allMatch(n -> admin.info(n).knowsEveryOwner())) {
                    return meets;
                }
            } else if (!(last instanceof SlotStep.Move move) || admin.info(move.target().node()).mayReceive(move)) {
                String done = admin.execute(last, states);
                if (last instanceof SlotStep.Meet) {
                    meets.add(done);
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the cluster did not converge in 60 s; last step " + last + "; what each node says: "
                + nodes.stream().map(n -> "redis-" + n.ordinal() + " " + admin.info(n)).toList());
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A port whose cluster bus port (+10000) is free too. */
    private static int freePort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int p = ThreadLocalRandom.current().nextInt(21000, 25000);
            try (ServerSocket a = new ServerSocket(p); ServerSocket b = new ServerSocket(p + 10000)) {
                return p;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IllegalStateException("no free port pair");
    }
}
