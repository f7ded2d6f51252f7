package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;

import io.tbmq.localstack.BrokerNode;

/**
 * The admin API of a two-node cluster: either node lists every session of the cluster, shows a
 * session of the other node with its subscriptions, and disconnects (and clears) a client connected
 * to the other node; a request without the token is refused, and a broker without a token has no API.
 */
class AdminApiIT {
    private static final String TOKEN = "admin-it-token";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static BrokerNode a;
    private static BrokerNode b;

    @BeforeAll
    static void start() {
        Map<String, String> config = Map.of("tbmq.kafka.topic-prefix", "admin.", "tbmq.admin.token", TOKEN);
        a = ItStack.get().startBroker("node-admin-a", config);
        b = ItStack.get().startBroker("node-admin-b", config);
    }

    @AfterAll
    static void stop() {
        for (BrokerNode n : new BrokerNode[] {a, b}) {
            if (n != null) {
                n.stop(Duration.ofSeconds(20));
            }
        }
    }

    private static HttpResponse<String> call(BrokerNode node, String method, String path, String token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10));
        if (token != null) {
            r.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode json(BrokerNode node, String method, String path) throws Exception {
        HttpResponse<String> response = call(node, method, path, TOKEN);
        assertThat(response.statusCode()).as(method + " " + path + ": " + response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    @Test
    void eitherNodeListsShowsAndDisconnectsTheClientsOfTheWholeCluster() throws Exception {
        CompletableFuture<Mqtt5DisconnectReasonCode> told = new CompletableFuture<>();
        Mqtt5BlockingClient device = Clients.v5(a, "adm-dev").addDisconnectedListener(ctx -> {
            if (ctx.getCause() instanceof Mqtt5DisconnectException e) {
                told.complete(e.getMqttMessage().getReasonCode());
            }
        }).buildBlocking();
        device.connectWith().cleanStart(false).sessionExpiryInterval(3600).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
        device.subscribeWith().topicFilter("plant/+/temperature").qos(MqttQos.AT_LEAST_ONCE).send();
        device.subscribeWith().topicFilter("plant/alarms/#").qos(MqttQos.EXACTLY_ONCE).send();
        Mqtt5BlockingClient other = Clients.alice5(b, "adm-other");
        other.publishWith().topic("adm/retained/1").retain(true).qos(MqttQos.AT_LEAST_ONCE).payload("r".getBytes()).send();

        // Node b knows node a's client from the session directory.
        Awaitility.await().atMost(20, TimeUnit.SECONDS).ignoreExceptions().until(() -> {
            JsonNode page = json(b, "GET", "/api/v1/sessions?connected=true");
            for (JsonNode s : page.get("sessions")) {
                if (s.get("clientId").asText().equals("adm-dev")) {
                    return s.get("node").asText().equals("node-admin-a") && s.get("subscriptions").asInt() == 2;
                }
            }
            return false;
        });
        JsonNode detail = json(b, "GET", "/api/v1/sessions/adm-dev");
        assertThat(detail.get("connected").asBoolean()).isTrue();
        assertThat(detail.get("expiryIntervalSeconds").asLong()).isEqualTo(3600);
        assertThat(detail.get("subscriptions").findValuesAsText("filter")).containsExactly("plant/+/temperature", "plant/alarms/#");
        assertThat(detail.get("subscriptions").findValues("qos").stream().map(JsonNode::asInt)).containsExactly(1, 2);
        // Paging: one session a page, the next page starts after the previous one's last.
        JsonNode first = json(a, "GET", "/api/v1/sessions?limit=1");
        assertThat(first.get("sessions")).hasSize(1);
        JsonNode second = json(a, "GET", "/api/v1/sessions?limit=1&after=" + first.get("next").asText());
        assertThat(second.get("sessions").get(0).get("clientId").asText()).isGreaterThan(first.get("next").asText());
        Awaitility.await().atMost(20, TimeUnit.SECONDS).ignoreExceptions()
                .until(() -> json(a, "GET", "/api/v1/retained").get("topics").toString().contains("\"adm/retained/1\""));

        // Refused without the token, and for bad input.
        assertThat(call(b, "GET", "/api/v1/sessions", null).statusCode()).isEqualTo(401);
        assertThat(call(b, "GET", "/api/v1/sessions", "wrong").statusCode()).isEqualTo(401);
        HttpResponse<String> bad = call(b, "GET", "/api/v1/sessions?limit=0", TOKEN);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("limit");
        assertThat(call(b, "GET", "/api/v1/sessions/nobody", TOKEN).statusCode()).isEqualTo(404);

        // Node b disconnects node a's client and clears its session.
        JsonNode done = json(b, "POST", "/api/v1/sessions/adm-dev/disconnect?clear=true");
        assertThat(done.get("node").asText()).isEqualTo("node-admin-a");
        assertThat(done.get("wasConnected").asBoolean()).isTrue();
        assertThat(told.get(20, TimeUnit.SECONDS)).isEqualTo(Mqtt5DisconnectReasonCode.ADMINISTRATIVE_ACTION);
        Awaitility.await().atMost(20, TimeUnit.SECONDS)
                .until(() -> call(b, "GET", "/api/v1/sessions/adm-dev", TOKEN).statusCode() == 404
                        && call(a, "GET", "/api/v1/sessions/adm-dev", TOKEN).statusCode() == 404);
        Mqtt5BlockingClient back = Clients.v5(a, "adm-dev").buildBlocking();
        boolean present = back.connectWith().cleanStart(false).sessionExpiryInterval(3600).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send().isSessionPresent();
        assertThat(present).as("the session was cleared").isFalse();
        back.disconnect();
        other.disconnect();

        // The description of the API is served; a broker without a token has no API.
        assertThat(call(a, "GET", "/api/v1/openapi.yaml", null).body()).contains("openapi: 3.0.3", "/sessions/{clientId}/disconnect");
        HttpResponse<String> off = call(ItStack.get().broker(), "GET", "/api/v1/sessions", TOKEN);
        assertThat(off.statusCode()).isEqualTo(404);
        assertThat(off.body()).contains("tbmq.admin.token");
    }
}
