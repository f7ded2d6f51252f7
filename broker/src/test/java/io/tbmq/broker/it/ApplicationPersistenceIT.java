package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.localstack.BrokerNode;

/**
 * Persistent APPLICATION sessions in their own Kafka topic: created on connect, the offline
 * backlog survives reconnects and a broker restart, re-sent messages carry DUP, and the session's
 * end deletes the topic. On a broker node of its own (it restarts it).
 */
class ApplicationPersistenceIT {
    private static ItStack it;
    private static BrokerNode node;

    @BeforeAll
    static void start() {
        it = ItStack.get();
        node = it.startBroker("node-apps", Map.of("tbmq.kafka.topic-prefix", "apps."));
    }

    @AfterAll
    static void stop() {
        node.stop(Duration.ofSeconds(20));
    }

    private RawClient application(String id, boolean cleanStart) throws Exception {
        RawClient c = new RawClient(node.mqttPort(), MqttVersion.MQTT_5);
        c.connect(id, "app", cleanStart, 600);
        return c;
    }

    private void publish(String topic, int count, String prefix) {
        Mqtt5BlockingClient pub = Clients.alice5(node, "app-pub-" + System.nanoTime());
        for (int i = 0; i < count; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload((prefix + i).getBytes()).send();
        }
        pub.disconnect();
    }

    private static List<RawClient.Received> receive(RawClient c, int count, boolean ack) throws Exception {
        List<RawClient.Received> got = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            RawClient.Received r = c.nextPublish(15_000);
            assertThat(r).as("message %d of %d", i, count).isNotNull();
            got.add(r);
            if (ack) {
                c.ack(MqttMessageType.PUBACK, r.packetId());
            }
        }
        return got;
    }

    private Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, it.stack().kafka().bootstrapServers());
        return Admin.create(p);
    }

    @Test
    void backlogSurvivesReconnectsAndABrokerRestartAndEndsWithTheSession() throws Exception {
        String id = "app-backlog";
        try (RawClient c = application(id, true)) {
            c.subscribe("apps/backlog/#", 1);
        }
        try (Admin admin = admin()) {
            assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS)).contains("apps.tbmq.msg.app.app-backlog");
        }
        publish("apps/backlog/t", 20, "a");
        try (RawClient c = application(id, false)) {
            List<RawClient.Received> got = receive(c, 20, true);
            assertThat(got).extracting(RawClient.Received::payload).startsWith("a0", "a1", "a2").endsWith("a19");
            assertThat(got).noneMatch(RawClient.Received::dup);
        }
        publish("apps/backlog/t", 10, "b");
        node.restart(Duration.ofSeconds(90));
        try (RawClient c = application(id, false)) {
            List<RawClient.Received> got = receive(c, 10, true);
            assertThat(got).extracting(RawClient.Received::payload).containsExactly("b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7",
                    "b8", "b9");
            assertThat(c.nextPublish(1_000)).as("nothing acknowledged comes again").isNull();
        }
        try (RawClient c = new RawClient(node.mqttPort(), MqttVersion.MQTT_5)) {
            // Clean start without expiry: the stored session and its backlog end with this connect.
            c.connect(id, "app", true, 0);
            assertThat(c.nextPublish(500)).isNull();
        }
        try (Admin admin = admin()) {
            Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> !admin.listTopics().names().get(10, TimeUnit.SECONDS)
                    .contains("apps.tbmq.msg.app.app-backlog"));
        }
    }

    @Test
    void unacknowledgedMessagesAreSentAgainWithDup() throws Exception {
        String id = "app-dup";
        try (RawClient c = application(id, true)) {
            c.subscribe("apps/dup/#", 1);
            publish("apps/dup/t", 3, "d");
            List<RawClient.Received> first = receive(c, 3, false);
            c.ack(MqttMessageType.PUBACK, first.get(0).packetId());
            Thread.sleep(500);
        }
        try (RawClient c = application(id, false)) {
            List<RawClient.Received> again = receive(c, 2, true);
            assertThat(again).extracting(RawClient.Received::payload).containsExactly("d1", "d2");
            assertThat(again).allMatch(RawClient.Received::dup);
        }
    }

    @Test
    void clientIdsThatAreNotTopicNamesAreEncoded() throws Exception {
        String id = "plant/7 line#2_ü";
        try (RawClient c = application(id, true)) {
            c.subscribe("apps/encoded/#", 1);
            publish("apps/encoded/t", 2, "e");
            assertThat(receive(c, 2, true)).extracting(RawClient.Received::payload).containsExactly("e0", "e1");
        }
        try (Admin admin = admin()) {
            assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS))
                    .contains("apps.tbmq.msg.app.plant_2f7_20line_232_5f_c3_bc");
        }
    }

    @Test
    void aCleanStartDropsTheBacklogAndStartsAFreshTopic() throws Exception {
        String id = "app-fresh";
        try (RawClient c = application(id, true)) {
            c.subscribe("apps/fresh/#", 1);
        }
        publish("apps/fresh/t", 5, "old");
        try (RawClient c = application(id, true)) {
            assertThat(c.nextPublish(1_000)).as("the backlog ended with the old session").isNull();
            c.subscribe("apps/fresh/#", 1);
            publish("apps/fresh/t", 2, "new");
            assertThat(receive(c, 2, true)).extracting(RawClient.Received::payload).containsExactly("new0", "new1");
        }
    }

    @Test
    void sharedSubscriptionMembersShareTheLoad() throws Exception {
        try (RawClient first = application("app-share-1", true); RawClient second = application("app-share-2", true)) {
            first.subscribe("$share/workers/apps/shared/#", 1);
            second.subscribe("$share/workers/apps/shared/#", 1);
            publish("apps/shared/t", 20, "s");
            List<String> all = new ArrayList<>();
            for (RawClient c : List.of(first, second)) {
                RawClient.Received r;
                int mine = 0;
                while ((r = c.nextPublish(2_000)) != null) {
                    c.ack(MqttMessageType.PUBACK, r.packetId());
                    all.add(r.payload());
                    mine++;
                }
                assertThat(mine).as("each member gets a share").isBetween(5, 15);
            }
            assertThat(all).hasSize(20).doesNotHaveDuplicates();
        }
    }
}
