package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;

/**
 * A scale-up's slot moves against real redis-server processes: while a slot is open (MIGRATING) the
 * brokers' scripts that create keys in it are refused, so the operator opens only a round of slots at
 * a time instead of a whole step (seen on a real node: 1,024 slots open for a second or more per step,
 * every broker batch touching one of them retried for the whole rebalance).
 */
class RedisSlotMoveIT {
    private static final int KEYS = 3000;
    private static final String[] KEY_IN_SLOT = keysForEverySlot();

    @TempDir
    Path dir;
    private RedisServers servers;

    @BeforeEach
    void servers() {
        servers = new RedisServers(dir);
    }

    @AfterEach
    void stopServers() throws InterruptedException {
        servers.close();
    }

    @Test
    void aStepOpensOneRoundOfSlotsAtATimeAndEveryKeyMovesWithItsSlot() throws Exception {
        List<RedisNode> nodes = new ArrayList<>(servers.start(0, 1));
        try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
            RedisServers.converge(admin, nodes, 1, 1024);
        }
        RedisClient single = RedisClient.create(RedisURI.create("127.0.0.1", nodes.get(0).port()));
        try (StatefulRedisConnection<String, String> c = single.connect()) {
            for (int i = 0; i < KEYS; i++) {
                c.async().set("{client-" + i + "}:session", "value-" + i);
            }
            assertThat(c.sync().dbsize()).isEqualTo(KEYS);
        } finally {
            single.shutdown();
        }

        nodes.addAll(servers.start(1, 1));
        AtomicBoolean moving = new AtomicBoolean(true);
        AtomicInteger mostOpen = new AtomicInteger();
        Thread watcher = Thread.ofPlatform().start(() -> {
            try (RedisClusterAdmin look = new RedisClusterAdmin(null)) {
                while (moving.get()) {
                    int open = look.observe(nodes.get(0)).migrating().size();
                    mostOpen.accumulateAndGet(open, Math::max);
                }
            }
        });
        try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
            RedisServers.converge(admin, nodes, 2, 1024);
        } finally {
            moving.set(false);
            watcher.join();
        }

        assertThat(mostOpen.get()).as("slots open at once on the source").isPositive()
                .isLessThanOrEqualTo(RedisClusterAdmin.SLOTS_PER_ROUND);
        try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
            for (RedisNode n : nodes) {
                NodeState state = admin.observe(n);
                assertThat(state.slotCount()).as("%s's share", n).isEqualTo(SlotPlanner.SLOTS / 2);
                assertThat(state.migrating()).as("%s left nothing open", n).isEmpty();
                assertThat(state.importing()).as("%s left nothing open", n).isEmpty();
            }
        }
        RedisClusterClient cluster = RedisClusterClient.create(nodes.stream()
                .map(n -> RedisURI.create("127.0.0.1", n.port())).toList());
        try (StatefulRedisClusterConnection<String, String> c = cluster.connect()) {
            for (int i = 0; i < KEYS; i++) {
                assertThat(c.sync().get("{client-" + i + "}:session")).isEqualTo("value-" + i);
            }
        } finally {
            cluster.shutdown();
        }
    }

    /**
     * A scale-down as the brokers live it: a Lettuce cluster client set up as the broker's (periodic
     * topology refresh every 5 s, adaptive refresh on redirects) that knew the removed master keeps
     * working. Seen on a real node before: the operator reset a removed master right after its last
     * slots moved, the brokers still mapping those slots to it got "CLUSTERDOWN Hash slot not
     * served" (not a redirect) until their next refresh, and "not connected" once the pod was gone.
     */
    @Test
    void clientsThatMappedSlotsToARemovedMasterAreRedirectedNotRefused() throws Exception {
        List<RedisNode> nodes = new ArrayList<>(servers.start(0, 3));
        try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
            RedisServers.converge(admin, nodes, 3, 1024);
        }
        RedisClusterClient cluster = RedisClusterClient.create(nodes.stream()
                .map(n -> RedisURI.create("127.0.0.1", n.port())).toList());
        cluster.setOptions(ClusterClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(5)))
                .validateClusterNodeMembership(false)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(Duration.ofSeconds(5)).enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1)).build())
                .build());
        List<String> refused = new CopyOnWriteArrayList<>();
        try (StatefulRedisClusterConnection<String, String> c = cluster.connect()) {
            // A key in every slot, so the client holds a connection to every master and maps every slot.
            for (int slot = 0; slot < SlotPlanner.SLOTS; slot++) {
                c.sync().set(keyIn(slot), "before");
            }
            try (RedisClusterAdmin admin = new RedisClusterAdmin(null)) {
                RedisServers.converge(admin, nodes, 2, 1024);
                NodeState removed = admin.observe(nodes.get(2));
                assertThat(removed.isAlone()).as("redis-2 was drained, forgotten and reset").isTrue();
            }
            for (int slot = 0; slot < SlotPlanner.SLOTS; slot++) {
                try {
                    assertThat(c.sync().get(keyIn(slot))).as("slot %d", slot).isEqualTo("before");
                } catch (RedisException e) {
                    refused.add(slot + ": " + e.getMessage());
                }
            }
        } finally {
            cluster.shutdown();
        }
        assertThat(refused).as("commands refused after the scale-down").isEmpty();
    }

    /** A key that hashes to {@code slot}. */
    private static String keyIn(int slot) {
        return KEY_IN_SLOT[slot];
    }

    private static String[] keysForEverySlot() {
        String[] keys = new String[SlotPlanner.SLOTS];
        int found = 0;
        for (int i = 0; found < keys.length; i++) {
            String key = "{k" + i + "}:session";
            int slot = SlotHash.getSlot(key);
            if (keys[slot] == null) {
                keys[slot] = key;
                found++;
            }
        }
        return keys;
    }
}
