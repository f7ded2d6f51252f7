package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's Redis steps (observe, plan, execute) against real redis-server processes in cluster
 * mode. Every node restarted at once on new addresses, as when every Redis pod is deleted together:
 * each node's nodes.conf names the others at addresses that no longer exist, none can reach another,
 * so each only suspects the others ({@code fail?}) for good and the cluster stays down until the
 * operator introduces them again at their new addresses (seen on a real node: RedisReady stayed
 * Converging for 10 minutes).
 */
class RedisClusterRecoveryIT {
    private static final int MASTERS = 3;
    private static final int NODE_TIMEOUT_MILLIS = 1000;

    @TempDir
    Path dir;
    private final List<Process> servers = new ArrayList<>();

    @AfterEach
    void stopServers() throws InterruptedException {
        for (Process p : servers) {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void everyNodeRestartedAtOnceOnNewAddressesFormsTheClusterAgain() throws Exception {
        List<RedisNode> before = startAll(i -> freePort());
        try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
            converge(admin, before);
        }
        for (Process p : servers) {
            p.destroy();
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        servers.clear();

        List<RedisNode> after = startAll(i -> freePort());
        // Until the node timeout passes each node still counts the others as up and says cluster_state:ok;
        // the operator keeps reconciling while a node says otherwise, so look once the suspicion is there.
        try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
            long until = System.currentTimeMillis() + 30_000;
            while (after.stream().anyMatch(admin::clusterStateOk) && System.currentTimeMillis() < until) {
                Thread.sleep(100);
            }
            assertThat(after).as("nodes that cannot reach each other give up on the cluster")
                    .noneMatch(admin::clusterStateOk);
            converge(admin, after);
            for (RedisNode n : after) {
                NodeState state = admin.observe(n);
                assertThat(state.known()).as("%s knows every other node", n).hasSize(MASTERS);
            }
            int served = after.stream().map(admin::observe).mapToInt(NodeState::slotCount).sum();
            assertThat(served).as("every slot kept its master").isEqualTo(SlotPlanner.SLOTS);
        }
    }

    /** What RedisProvisioner does over successive reconciles, until every master says cluster_state:ok. */
    private static void converge(RedisClusterAdmin admin, List<RedisNode> nodes) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        SlotStep last = null;
        while (System.currentTimeMillis() < deadline) {
            List<NodeState> states = nodes.stream().map(admin::observe).toList();
            last = SlotPlanner.next(states, MASTERS, 4096);
            if (last instanceof SlotStep.Done) {
                if (nodes.stream().allMatch(admin::clusterStateOk)) {
                    return;
                }
            } else {
                admin.execute(last, states);
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the cluster did not converge in 60 s; last step " + last + ", cluster_state:ok on "
                + nodes.stream().filter(admin::clusterStateOk).toList());
    }

    private List<RedisNode> startAll(IntFunction<Integer> port) throws IOException, InterruptedException {
        List<RedisNode> nodes = new ArrayList<>();
        for (int i = 0; i < MASTERS; i++) {
            int p = port.apply(i);
            Path data = Files.createDirectories(dir.resolve("redis-" + i));
            Process server = new ProcessBuilder("redis-server", "--port", Integer.toString(p), "--bind", "127.0.0.1",
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS), "--dir", data.toString(),
                    "--save", "", "--appendonly", "no", "--daemonize", "no")
                    .redirectErrorStream(true).redirectOutput(data.resolve("redis.log").toFile()).start();
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

    private static boolean listening(int port) {
        try (var s = new java.net.Socket("127.0.0.1", port)) {
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
