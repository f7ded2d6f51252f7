package io.tbmq.broker.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.cluster.AdminCommand;
import io.tbmq.broker.cluster.ClusterDirectory;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.retain.RetainedStore;
import io.tbmq.broker.session.InMemorySessionStore;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.subscription.SubscriptionTrie;

/** The admin API's answers, on a node holding sessions of its own and knowing some of another node. */
class AdminApiTest {
    private static final String TOKEN = "s3cret";
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final SubscriptionTrie trie = new SubscriptionTrie();
    private final SessionRegistry registry = new SessionRegistry(trie, timers, 100, false, (c, r) -> { },
            s -> CompletableFuture.completedFuture(null), InMemorySessionStore.INSTANCE, SessionJournal.NONE, RemoteSessions.NONE);
    private final ClusterDirectory directory = new ClusterDirectory(trie);
    private final List<String> commands = new ArrayList<>();
    private final RetainedStore retained = new RetainedStore(100);
    private final AdminApi api = new AdminApi(new AdminToken(Optional.of(TOKEN), Optional.empty()),
            new ClusterSessions("node-a", registry, directory, (node, clientId, command) -> {
                AdminCommand c = AdminCommand.decode(command);
                commands.add(node + " " + clientId + " epoch " + c.epoch() + (c.clear() ? " clear" : ""));
                return CompletableFuture.completedFuture(null);
            }), retained);

    @AfterEach
    void stop() {
        timers.shutdownNow();
    }

    private AdminApi.Response call(String method, String path, String authorization) {
        int q = path.indexOf('?');
        Map<String, String> query = new HashMap<>();
        if (q >= 0) {
            for (String pair : path.substring(q + 1).split("&")) {
                query.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
            }
            path = path.substring(0, q);
        }
        return api.handle(new AdminApi.Request(method, path, query, authorization)).join();
    }

    private AdminApi.Response call(String method, String path) {
        return call(method, path, "Bearer " + TOKEN);
    }

    private void remote(String clientId, String node, boolean connected, long epoch, String... filters) {
        List<SessionState.Sub> subs = new ArrayList<>();
        for (String f : filters) {
            subs.add(new SessionState.Sub(f, new SubscriptionOptions(1, false, false, 0, 0)));
        }
        directory.apply(new SessionState(clientId, epoch, Persistence.DEVICE, 3600, 0, subs, node, connected, 1, null, List.of()));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> page(AdminApi.Response r) {
        assertThat(r.status()).as(String.valueOf(r.body())).isEqualTo(200);
        return (Map<String, Object>) r.body();
    }

    @SuppressWarnings("unchecked")
    private static List<ClusterSessions.Summary> summaries(Map<String, Object> page) {
        return (List<ClusterSessions.Summary>) page.get("sessions");
    }

    @Test
    void offWithoutATokenAndClosedWithoutTheRightOne() {
        AdminApi off = new AdminApi(new AdminToken(Optional.empty(), Optional.empty()),
                new ClusterSessions("n", registry, directory, (n, c, b) -> null), retained);
        AdminApi.Response r = off.handle(new AdminApi.Request("GET", "/api/v1/sessions", Map.of(), "Bearer " + TOKEN)).join();
        assertThat(r.status()).isEqualTo(404);
        assertThat(call("GET", "/api/v1/sessions", null).status()).isEqualTo(401);
        assertThat(call("GET", "/api/v1/sessions", null).headers()).containsKey("WWW-Authenticate");
        assertThat(call("GET", "/api/v1/sessions", "Bearer s3cre").status()).isEqualTo(401);
        assertThat(call("GET", "/api/v1/sessions", "Basic " + TOKEN).status()).isEqualTo(401);
        assertThat(call("GET", "/api/v1/sessions", "bearer " + TOKEN).status()).isEqualTo(200);
    }

    @Test
    void sessionsOfEveryNodeByClientIdAPageAtATime() {
        registry.open("local-1", false, 600, null);
        remote("remote-2", "node-b", true, 7, "x/#");
        remote("remote-3", "node-b", false, 8);
        Map<String, Object> first = page(call("GET", "/api/v1/sessions?limit=2"));
        List<ClusterSessions.Summary> sessions = summaries(first);
        assertThat(sessions).extracting(ClusterSessions.Summary::clientId).containsExactly("local-1", "remote-2");
        assertThat(sessions.get(0).node()).isEqualTo("node-a");
        assertThat(sessions.get(0).queued()).isEqualTo(0);
        assertThat(sessions.get(1)).isEqualTo(new ClusterSessions.Summary("remote-2", "node-b", true, "DEVICE", 1, null));
        assertThat(first.get("next")).isEqualTo("remote-2");
        Map<String, Object> last = page(call("GET", "/api/v1/sessions?limit=2&after=remote-2"));
        assertThat(summaries(last)).extracting(ClusterSessions.Summary::clientId).containsExactly("remote-3");
        assertThat(last.get("next")).isNull();
        Map<String, Object> offline = page(call("GET", "/api/v1/sessions?connected=false"));
        assertThat(summaries(offline)).extracting(ClusterSessions.Summary::clientId).containsExactly("local-1", "remote-3");

        assertThat(call("GET", "/api/v1/sessions?limit=0").status()).isEqualTo(400);
        assertThat(call("GET", "/api/v1/sessions?limit=many").body().toString()).contains("limit");
        assertThat(call("GET", "/api/v1/sessions?connected=maybe").body().toString()).contains("connected");
    }

    @Test
    void aSessionOfAnotherNodeWithItsSubscriptionsAndAClientIdWithASlash() {
        remote("plant/line-1", "node-b", true, 7, "b/#", "a/+");
        AdminApi.Response r = call("GET", "/api/v1/sessions/plant%2Fline-1");
        assertThat(r.status()).isEqualTo(200);
        ClusterSessions.Detail d = (ClusterSessions.Detail) r.body();
        assertThat(d.node()).isEqualTo("node-b");
        assertThat(d.subscriptions()).extracting(ClusterSessions.Subscription::filter).containsExactly("a/+", "b/#");
        assertThat(call("GET", "/api/v1/sessions/nobody").status()).isEqualTo(404);
    }

    @Test
    void aClientOfAnotherNodeIsDisconnectedThroughItsDownlinkAndALocalOneAtOnce() {
        remote("remote-2", "node-b", true, 7);
        AdminApi.Response r = call("POST", "/api/v1/sessions/remote-2/disconnect?clear=true");
        assertThat(r.body()).isEqualTo(new ClusterSessions.Disconnected("remote-2", "node-b", true, true));
        assertThat(commands).containsExactly("node-b remote-2 epoch 7 clear");

        registry.open("local-1", false, 600, null);
        AdminApi.Response local = call("POST", "/api/v1/sessions/local-1/disconnect?clear=true");
        assertThat(local.status()).isEqualTo(200);
        assertThat(registry.get("local-1")).isNull();
        assertThat(commands).hasSize(1);
        assertThat(call("POST", "/api/v1/sessions/local-1/disconnect").status()).isEqualTo(404);
        assertThat(call("GET", "/api/v1/sessions/local-1/disconnect").status()).as("wrong method").isEqualTo(404);
    }

    @Test
    void retainedTopicsSortedAPageAtATime() {
        for (String t : List.of("b/1", "a/1", "c/1")) {
            retained.put(new PublishMessage(t, 1, true, "x".getBytes(), MessageProperties.NONE, "p", 0, 0));
        }
        Map<String, Object> first = page(call("GET", "/api/v1/retained?limit=2"));
        assertThat(first.get("topics")).isEqualTo(List.of("a/1", "b/1"));
        assertThat(first.get("next")).isEqualTo("b/1");
        Map<String, Object> rest = page(call("GET", "/api/v1/retained?after=b/1"));
        assertThat(rest.get("topics")).isEqualTo(List.of("c/1"));
    }

    @Test
    void everyOperationTheOpenApiDescriptionNamesIsServed() throws Exception {
        String spec;
        try (InputStream in = AdminApi.class.getResourceAsStream("/io/tbmq/broker/admin/admin-api.yaml")) {
            spec = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String[] lines = spec.split("\n");
        List<String> operations = new ArrayList<>();
        String path = null;
        for (String line : lines) {
            Matcher p = Pattern.compile("^  (/\\S+):$").matcher(line);
            Matcher m = Pattern.compile("^    (get|post|put|delete):$").matcher(line);
            if (p.matches()) {
                path = p.group(1);
            } else if (m.matches() && path != null) {
                operations.add(m.group(1).toUpperCase() + " " + path);
            } else if (!line.startsWith("  ")) {
                path = null;
            }
        }
        assertThat(operations).hasSize(4);
        for (String op : operations) {
            remote("c1", "node-b", true, 7);
            String[] parts = op.split(" ");
            AdminApi.Response r = call(parts[0], "/api/v1" + parts[1].replace("{clientId}", "c1"));
            assertThat(r.status()).as(op + ": " + r.body()).isEqualTo(200);
        }
    }
}
