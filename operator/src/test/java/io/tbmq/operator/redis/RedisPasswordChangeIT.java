package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.tbmq.operator.desired.RedisModel;

/**
 * The Redis side of a password change (RedisPasswordRotation) on real redis-server processes in
 * cluster mode, started as the pods are (requirepass, masterauth and the probe user): clients of the
 * old password and of the new one both work while the brokers restart, only the new one after, and
 * the readiness probe's PING works throughout.
 */
class RedisPasswordChangeIT {
    private static final int MASTERS = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path dir;
    private RedisServers servers;
    private final List<RedisClusterClient> clients = new ArrayList<>();

    @BeforeEach
    void servers() {
        servers = new RedisServers(dir);
    }

    @AfterEach
    void stop() throws InterruptedException {
        clients.forEach(c -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        servers.close();
    }

    @Test
    void bothPasswordsWorkWhileTheBrokersRestartAndOnlyTheNewOneAfter() throws Exception {
        List<RedisNode> nodes = servers.start(0, MASTERS, asPod("old"));
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("old"), TIMEOUT)) {
            RedisServers.converge(admin, nodes, MASTERS, 4096);
        }
        var before = connect(nodes.get(0), "old");
        for (int i = 0; i < 100; i++) {
            before.sync().set("client-" + i, "v" + i);
        }

        // As the operator tries them: the copy's password, its previous one, the user's Secret's, none.
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("old", "new"), TIMEOUT)) {
            nodes.forEach(n -> admin.acceptPasswords(n, "new"));
        }
        var restarted = connect(nodes.get(1), "new");
        assertThat(restarted.sync().get("client-7")).as("a broker restarted with the new password").isEqualTo("v7");
        assertThat(connect(nodes.get(2), "old").sync().get("client-8")).as("a broker not restarted yet, reconnecting")
                .isEqualTo("v8");
        assertThat(nodes).allSatisfy(n -> assertThat(probe(n)).isEqualTo("PONG"));

        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("new", "old"), TIMEOUT)) {
            nodes.forEach(n -> admin.requirePassword(n, "new"));
            nodes.forEach(n -> admin.requirePassword(n, "new")); // a pass repeated after a failure is no error
        }
        for (RedisNode n : nodes) {
            assertThatThrownBy(() -> connect(n, "old")).as("redis-%d refuses the old password", n.ordinal())
                    .isInstanceOf(RedisConnectionException.class);
        }
        assertThat(restarted.sync().get("client-9")).isEqualTo("v9");
        assertThat(nodes).allSatisfy(n -> assertThat(probe(n)).as("the probe needs no password").isEqualTo("PONG"));
        assertThat(RedisServers.command(nodes.get(0), "--user", RedisModel.PROBE_USER, "--pass", "x", "--no-auth-warning",
                "get", "client-1")).as("and may do nothing else").contains("NOPERM");
    }

    @Test
    void theOperatorReachesANodeRestartedWithTheNewPasswordAndMovesKeysWithIt() throws Exception {
        List<RedisNode> nodes = servers.start(0, MASTERS, asPod("old"));
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("old"), TIMEOUT)) {
            RedisServers.converge(admin, nodes, MASTERS, 4096);
            nodes.forEach(n -> admin.acceptPasswords(n, "new"));
        }
        var client = connect(nodes.get(0), "new");
        for (int i = 0; i < 200; i++) {
            client.sync().set("key-" + i, "v" + i);
        }
        // A pod restarting mid-change starts with what the copy names by then: the new password only.
        List<RedisNode> grown = new ArrayList<>(nodes);
        grown.addAll(servers.start(MASTERS, 1, asPod("new")));
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("old", "new"), TIMEOUT)) {
            // Its keys reach the new master by MIGRATE, which authenticates with the password the target took.
            RedisServers.converge(admin, grown, MASTERS + 1, 4096);
            assertThat(admin.observe(grown.get(MASTERS)).slotCount()).as("the newcomer serves slots").isPositive();
            // While brokers of the old password remain, it is accepted again on a pod that restarted without it.
            admin.acceptPasswords(grown.get(MASTERS), "new", "old");
        }
        assertThat(connect(grown.get(MASTERS), "old").sync().get("key-1")).isEqualTo("v1");
        var after = connect(grown.get(MASTERS), "new"); // a client that read the topology after the move
        for (int i = 0; i < 200; i++) {
            assertThat(after.sync().get("key-" + i)).as("key-%d after the move", i).isEqualTo("v" + i);
        }
    }

    @Test
    void nodesThatAskedForNoPasswordAskForTheGeneratedOneOnceTheBrokersHaveIt() throws Exception {
        // As pods of an operator version that gave the managed Redis no password run (here with the probe user).
        List<RedisNode> nodes = servers.start(0, MASTERS, probeUser());
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("generated", ""), TIMEOUT)) {
            RedisServers.converge(admin, nodes, MASTERS, 4096);
        }
        RedisClusterClient unauthenticated = RedisClusterClient.create(RedisURI.create(nodes.get(0).host(), nodes.get(0).port()));
        clients.add(unauthenticated);
        var old = unauthenticated.connect();
        for (int i = 0; i < 200; i++) {
            old.sync().set("device-" + i, "v" + i);
        }
        assertThat(connect(nodes.get(1), "generated").sync().get("device-1"))
                .as("a broker restarted with the generated password, before any node asks for it").isEqualTo("v1");

        // A pod replaced meanwhile starts asking for the generated password; until the brokers have it, it takes any.
        List<RedisNode> grown = new ArrayList<>(nodes);
        grown.addAll(servers.start(MASTERS, 1, asPod("generated")));
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("generated", ""), TIMEOUT)) {
            admin.acceptAnyPassword(grown.get(MASTERS));
            // Keys move between nodes that ask for no password, authenticated: MIGRATE's AUTH names the user.
            RedisServers.converge(admin, grown, MASTERS + 1, 4096);
            assertThat(admin.observe(grown.get(MASTERS)).slotCount()).isPositive();
            grown.forEach(n -> admin.requirePassword(n, "generated"));
        }
        var after = connect(grown.get(MASTERS), "generated");
        for (int i = 0; i < 200; i++) {
            assertThat(after.sync().get("device-" + i)).as("device-%d", i).isEqualTo("v" + i);
        }
        assertThat(RedisServers.command(nodes.get(0), "get", "device-1")).as("a client without it").contains("NOAUTH");
        assertThat(grown).allSatisfy(n -> assertThat(probe(n)).isEqualTo("PONG"));
    }

    @Test
    void whatANodeTakesIsReadAndAnythingButThePasswordInForceIsClosed() throws Exception {
        List<RedisNode> nodes = servers.start(0, 2, asPod("old"));
        RedisNode left = nodes.get(0);
        RedisNode anyway = nodes.get(1);
        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("old"), TIMEOUT)) {
            // As a change interrupted after its first step leaves one node, and an upgrade from no password the other.
            admin.acceptPasswords(left, "new");
            admin.acceptAnyPassword(anyway);
        }
        try (RedisClusterAdmin check = new RedisClusterAdmin("new", TIMEOUT)) {
            assertThat(check.acceptance(left)).isEqualTo(RedisClusterAdmin.Acceptance.AMONG_OTHERS);
        }
        try (RedisClusterAdmin check = new RedisClusterAdmin("wrong", TIMEOUT)) {
            assertThat(check.acceptance(left)).isEqualTo(RedisClusterAdmin.Acceptance.REFUSED);
            assertThat(check.acceptance(anyway)).as("a node that takes any password").isEqualTo(RedisClusterAdmin.Acceptance.AMONG_OTHERS);
        }

        try (RedisClusterAdmin admin = new RedisClusterAdmin(List.of("new", "old"), TIMEOUT)) {
            assertThat(admin.closeAllBut(left, "new")).isTrue();
            assertThat(admin.closeAllBut(anyway, "new")).isTrue();
            assertThat(admin.closeAllBut(left, "new")).as("nothing left to close").isFalse();
        }
        for (RedisNode n : nodes) {
            try (RedisClusterAdmin check = new RedisClusterAdmin("new", TIMEOUT); RedisClusterAdmin old = new RedisClusterAdmin("old", TIMEOUT)) {
                assertThat(check.acceptance(n)).isEqualTo(RedisClusterAdmin.Acceptance.ONLY);
                assertThatThrownBy(() -> old.observe(n)).as("redis-%d refuses the old password", n.ordinal())
                        .isInstanceOf(RedisConnectionException.class);
            }
        }
        assertThat(RedisServers.command(anyway, "get", "k")).as("a client without a password").contains("NOAUTH");
        assertThat(nodes).allSatisfy(n -> assertThat(probe(n)).isEqualTo("PONG"));
    }

    @Test
    void aRefusedPasswordIsToldApartFromANodeNotThereEveryTime() throws Exception {
        RedisNode node = servers.start(0, 1, asPod("right")).get(0);
        // Lettuce loses Redis' refusal in about one handshake of fifty (measured on this machine kind):
        // 400 refusals all read as such, with a wrong password and with none, hold only if it asks again.
        try (RedisClusterAdmin wrong = new RedisClusterAdmin("wrong", TIMEOUT); RedisClusterAdmin none = new RedisClusterAdmin("", TIMEOUT)) {
            for (int i = 0; i < 200; i++) {
                assertThat(wrong.acceptance(node)).as("a wrong password, try %d", i).isEqualTo(RedisClusterAdmin.Acceptance.REFUSED);
                assertThat(none.acceptance(node)).as("none, try %d", i).isEqualTo(RedisClusterAdmin.Acceptance.REFUSED);
            }
        }
        servers.stopAll();
        try (RedisClusterAdmin right = new RedisClusterAdmin("right", TIMEOUT)) {
            assertThatThrownBy(() -> right.acceptance(node)).as("a node not there is no refusal").isInstanceOf(RedisConnectionException.class);
        }
    }

    /** The arguments and configuration a Redis pod starts with (RedisModel). */
    private static List<String> asPod(String password) {
        List<String> args = new ArrayList<>(List.of("--requirepass", password, "--masterauth", password));
        args.addAll(probeUser());
        return args;
    }

    private static List<String> probeUser() {
        List<String> args = new ArrayList<>(List.of("--user"));
        args.addAll(List.of(RedisModel.PROBE_USER_RULE.split(" ")));
        return args;
    }

    private static String probe(RedisNode node) throws Exception {
        return RedisServers.command(node, "--user", RedisModel.PROBE_USER, "--pass", RedisModel.PROBE_USER, "--no-auth-warning",
                "ping").trim();
    }

    private StatefulRedisClusterConnection<String, String> connect(RedisNode seed, String password) {
        RedisClusterClient client = RedisClusterClient.create(RedisURI.builder().withHost(seed.host()).withPort(seed.port())
                .withPassword(password.toCharArray()).withTimeout(TIMEOUT).build());
        clients.add(client);
        return client.connect();
    }
}
