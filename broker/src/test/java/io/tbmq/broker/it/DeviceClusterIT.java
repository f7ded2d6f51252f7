package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisNode;

/**
 * Persistent DEVICE sessions on a real 3-master Redis Cluster, with slot groups on: many clients'
 * messages stored by one script call per group, every client's keys in its group's slot.
 */
class DeviceClusterIT {
    private static ItStack it;
    private static BrokerNode broker;

    @BeforeAll
    static void start() {
        it = ItStack.cluster();
        broker = it.startBroker("node-groups", Map.of("tbmq.redis.slot-groups", "4", "tbmq.kafka.topic-prefix", "groups."));
    }

    @AfterAll
    static void stop() {
        broker.stop(java.time.Duration.ofSeconds(20));
    }

    @Test
    void manyClientsQueueOfflineAcrossTheClusterAndGetEverythingInOrder() throws Exception {
        int clients = 20;
        for (int i = 0; i < clients; i++) {
            try (RawClient c = new RawClient(broker.mqttPort(), MqttVersion.MQTT_3_1_1)) {
                c.connect("cl-" + i, "alice", false, 0);
                c.subscribe("cluster/" + i + "/+", 1);
            }
        }
        Mqtt5BlockingClient pub = Clients.alice5(broker, "cluster-pub");
        for (int m = 0; m < 10; m++) {
            for (int i = 0; i < clients; i++) {
                pub.publishWith().topic("cluster/" + i + "/x").qos(MqttQos.AT_LEAST_ONCE).payload(("m" + m).getBytes()).send();
            }
        }
        pub.disconnect();
        List<RedisNode> nodes = it.stack().redisCluster().orElseThrow().nodes();
        Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> keyCount(nodes, "*_messages_*") == clients * 10);
        int mastersWithKeys = 0;
        for (RedisNode n : nodes) {
            if (RedisCli.command(n.port(), "KEYS *_messages_*").length() > 5) {
                mastersWithKeys++;
            }
        }
        assertThat(mastersWithKeys).as("groups spread over the masters").isGreaterThan(1);
        for (int i = 0; i < clients; i++) {
            try (RawClient c = new RawClient(broker.mqttPort(), MqttVersion.MQTT_3_1_1)) {
                assertThat(c.connect("cl-" + i, "alice", false, 0).variableHeader().isSessionPresent()).isTrue();
                List<String> got = new ArrayList<>();
                for (int m = 0; m < 10; m++) {
                    RawClient.Received r = c.nextPublish(10_000);
                    assertThat(r).as("client %d message %d", i, m).isNotNull();
                    got.add(r.payload());
                    c.ack(MqttMessageType.PUBACK, r.packetId());
                }
                assertThat(got).containsExactly("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9");
            }
        }
        Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> keyCount(nodes, "*_messages_*") == 0);
    }

    private static int keyCount(List<RedisNode> nodes, String pattern) {
        int count = 0;
        for (RedisNode n : nodes) {
            String reply = RedisCli.command(n.port(), "KEYS " + pattern);
            if (reply.startsWith("*")) {
                count += Integer.parseInt(reply.substring(1, reply.indexOf('\r')));
            }
        }
        return count;
    }
}
