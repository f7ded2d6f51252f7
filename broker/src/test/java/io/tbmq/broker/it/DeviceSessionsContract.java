package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.persistence.redis.RedisKeys;
import io.tbmq.localstack.BrokerNode;

/**
 * What persistent DEVICE sessions promise on any Redis, asserted on delivery and on the Redis
 * keys: offline queueing, order, packet ids across the 65535 wrap, DUP on re-delivery, clean
 * start, the per-client limit and the message TTL. Run on standalone Redis and on a Redis Cluster.
 */
abstract class DeviceSessionsContract {
    private final ItStack it = stack();
    private final BrokerNode broker = it.broker();

    /** The stack to run on. */
    abstract ItStack stack();

    /** One inline Redis command, sent to the node that holds its keys. */
    abstract String redis(String command);

    private static long integer(String reply) {
        return Long.parseLong(reply.trim().substring(1).trim());
    }

    private RawClient persistentSubscriber(BrokerNode node, String clientId, MqttVersion v, String filter) throws Exception {
        RawClient c = new RawClient(node.mqttPort(), v);
        c.connect(clientId, "alice", v == MqttVersion.MQTT_5, v == MqttVersion.MQTT_5 ? 600 : 0);
        c.subscribe(filter, 1);
        return c;
    }

    private RawClient reconnect(BrokerNode node, String clientId, MqttVersion v) throws Exception {
        RawClient c = new RawClient(node.mqttPort(), v);
        assertThat(c.connect(clientId, "alice", false, v == MqttVersion.MQTT_5 ? 600 : 0).variableHeader().isSessionPresent())
                .as("session present").isTrue();
        return c;
    }

    private void publish(BrokerNode node, String topic, int count, String prefix) {
        Mqtt5BlockingClient pub = Clients.alice5(node, "pub-" + topic.replace('/', '-') + System.nanoTime());
        for (int i = 0; i < count; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload((prefix + i).getBytes()).send();
        }
        pub.disconnect();
    }

    private List<RawClient.Received> receive(RawClient c, int count, boolean ack) throws Exception {
        List<RawClient.Received> got = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            RawClient.Received r = c.nextPublish(10_000);
            assertThat(r).as("message %d of %d", i, count).isNotNull();
            got.add(r);
            if (ack) {
                c.ack(MqttMessageType.PUBACK, r.packetId());
            }
        }
        return got;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = MqttVersion.class, names = {"MQTT_3_1_1", "MQTT_5"})
    void offlineMessagesAreKeptInRedisAndDeliveredInOrder(MqttVersion v) throws Exception {
        String id = "dev-offline-" + v.protocolLevel();
        persistentSubscriber(broker, id, v, "persist/" + id + "/#").close();
        publish(broker, "persist/" + id + "/t", 100, "m");
        Awaitility.await().atMost(15, TimeUnit.SECONDS).until(() -> integer(redis("ZCARD {" + id + "}_messages")) == 100);
        try (RawClient c = reconnect(broker, id, v)) {
            List<RawClient.Received> got = receive(c, 100, true);
            for (int i = 0; i < 100; i++) {
                assertThat(got.get(i).payload()).isEqualTo("m" + i);
                assertThat(got.get(i).dup()).as("first delivery").isFalse();
            }
            assertThat(c.nextPublish(500)).isNull();
            Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> integer(redis("ZCARD {" + id + "}_messages")) == 0);
            assertThat(integer(redis("EXISTS {" + id + "}_messages_1"))).as("acknowledged strings deleted").isZero();
        }
    }

    @Test
    void orderIsKeptAcrossThePacketIdWrap() throws Exception {
        String id = "dev-wrap";
        persistentSubscriber(broker, id, MqttVersion.MQTT_3_1_1, "persist/wrap/#").close();
        assertThat(redis("HSET {" + id + "}_last_packet_id id 65530 score 65530")).startsWith(":");
        publish(broker, "persist/wrap/t", 10, "w");
        Awaitility.await().atMost(15, TimeUnit.SECONDS).until(() -> integer(redis("ZCARD {" + id + "}_messages")) == 10);
        String scores = redis("ZRANGE {" + id + "}_messages 0 -1 WITHSCORES");
        assertThat(scores).contains("{dev-wrap}_messages_1\r\n").contains("65536");
        try (RawClient c = reconnect(broker, id, MqttVersion.MQTT_3_1_1)) {
            List<RawClient.Received> got = receive(c, 10, true);
            assertThat(got).extracting(RawClient.Received::packetId).containsExactly(65531, 65532, 65533, 65534, 65535, 1, 2, 3, 4, 5);
            assertThat(got).extracting(RawClient.Received::payload).containsExactly("w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7",
                    "w8", "w9");
        }
    }

    @Test
    void unacknowledgedMessagesComeBackWithTheirPacketIdsAndDup() throws Exception {
        String id = "dev-dup";
        try (RawClient c = persistentSubscriber(broker, id, MqttVersion.MQTT_5, "persist/dup/#")) {
            publish(broker, "persist/dup/t", 3, "d");
            List<RawClient.Received> first = receive(c, 3, false);
            assertThat(first).noneMatch(RawClient.Received::dup);
            c.ack(MqttMessageType.PUBACK, first.get(0).packetId());
            Thread.sleep(300);
        }
        try (RawClient c = reconnect(broker, id, MqttVersion.MQTT_5)) {
            List<RawClient.Received> again = receive(c, 2, true);
            assertThat(again).extracting(RawClient.Received::payload).containsExactly("d1", "d2");
            assertThat(again).allMatch(RawClient.Received::dup);
            assertThat(c.nextPublish(500)).isNull();
        }
    }

    @Test
    void cleanStartRemovesEveryKeyOfTheClientButTheTimeOfTheClearForTenMinutes() throws Exception {
        String id = "dev-clean";
        persistentSubscriber(broker, id, MqttVersion.MQTT_5, "persist/clean/#").close();
        publish(broker, "persist/clean/t", 5, "c");
        Awaitility.await().atMost(15, TimeUnit.SECONDS).until(() -> integer(redis("ZCARD {" + id + "}_messages")) == 5);
        try (RawClient c = new RawClient(broker.mqttPort(), MqttVersion.MQTT_5)) {
            assertThat(c.connect(id, "alice", true, 600).variableHeader().isSessionPresent()).isFalse();
            assertThat(integer(redis("EXISTS {" + id + "}_messages {" + id + "}_last_packet_id {" + id + "}_messages_1"))).isZero();
            // Left for ten minutes: another node's late removal of the old session's messages skips them.
            assertThat(integer(redis("PTTL {" + id + "}_cleared"))).isBetween(500_000L, 600_000L);
            assertThat(c.nextPublish(500)).isNull();
        }
    }

    @Test
    void limitTrimsTheOldestAndTtlExpiresMessages() throws Exception {
        BrokerNode small = it.startBroker("node-limits", Map.of("tbmq.kafka.topic-prefix", "limits.",
                "tbmq.persistence.device-messages-limit", "5", "tbmq.persistence.device-message-ttl", "2s"));
        try {
            String id = "dev-limit";
            persistentSubscriber(small, id, MqttVersion.MQTT_3_1_1, "limits/#").close();
            publish(small, "limits/t", 8, "l");
            Awaitility.await().atMost(15, TimeUnit.SECONDS).until(() -> redis("ZRANGE {" + id + "}_messages 0 -1").contains("_8"));
            assertThat(integer(redis("ZCARD {" + id + "}_messages"))).as("trimmed to the limit").isEqualTo(5);
            assertThat(integer(redis("EXISTS {" + id + "}_messages_1 {" + id + "}_messages_3"))).as("trimmed strings deleted").isZero();
            long ttl = integer(redis("TTL {" + id + "}_messages_8"));
            assertThat(ttl).isBetween(1L, 2L);
            try (RawClient c = reconnect(small, id, MqttVersion.MQTT_3_1_1)) {
                assertThat(receive(c, 5, true)).extracting(RawClient.Received::payload).containsExactly("l3", "l4", "l5", "l6", "l7");
            }
            publish(small, "limits/t", 3, "x");
            Awaitility.await().atMost(15, TimeUnit.SECONDS).until(() -> integer(redis("ZCARD {" + id + "}_messages")) == 3);
            Thread.sleep(3_000);
            try (RawClient c = reconnect(small, id, MqttVersion.MQTT_3_1_1)) {
                assertThat(c.nextPublish(1_000)).as("expired after the TTL").isNull();
            }
            assertThat(integer(redis("ZCARD {" + id + "}_messages"))).as("references to expired messages cleaned on load").isZero();
        } finally {
            small.stop(java.time.Duration.ofSeconds(20));
        }
    }

    /**
     * Hostile client ids: braces (the hash-tag delimiters), slashes, a line break, non-ASCII and a
     * long id. Each client's keys must be its own (no two clients share a key or a hash tag) and
     * each gets exactly its own messages back.
     */
    @Test
    void clientIdsWithBracesSlashesAndControlCharactersKeepTheirOwnKeys() throws Exception {
        List<String> ids = List.of("{odd}", "odd", "}odd{", "a/b/{c}", "line\nbreak", "\u00fcn\u00ef-\u8bbe\u5907", "x".repeat(200));
        RedisKeys keys = new RedisKeys(0);
        java.util.Set<String> tags = new java.util.HashSet<>();
        for (int i = 0; i < ids.size(); i++) {
            String key = new String(keys.messages(ids.get(i)), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(key.indexOf('{')).as(key).isZero();
            assertThat(tags.add(key.substring(0, key.indexOf('}') + 1))).as("hash tag of %s is its own", ids.get(i)).isTrue();
            persistentSubscriber(broker, ids.get(i), MqttVersion.MQTT_5, "odd/" + i + "/in").close();
        }
        for (int i = 0; i < ids.size(); i++) {
            publish(broker, "odd/" + i + "/in", 3, "odd-" + i + "-");
        }
        for (int i = 0; i < ids.size(); i++) {
            String key = new String(keys.messages(ids.get(i)), java.nio.charset.StandardCharsets.UTF_8);
            Awaitility.await().atMost(15, TimeUnit.SECONDS).until(() -> integer(redis("ZCARD " + key)) >= 3);
            assertThat(integer(redis("ZCARD " + key))).as("messages stored for %s", ids.get(i)).isEqualTo(3);
        }
        for (int i = 0; i < ids.size(); i++) {
            try (RawClient c = reconnect(broker, ids.get(i), MqttVersion.MQTT_5)) {
                assertThat(receive(c, 3, true)).extracting(RawClient.Received::payload)
                        .containsExactly("odd-" + i + "-0", "odd-" + i + "-1", "odd-" + i + "-2");
                assertThat(c.nextPublish(300)).as("nothing of another client").isNull();
            }
        }
    }
}
