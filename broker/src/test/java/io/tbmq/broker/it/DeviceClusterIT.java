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
        broker = it.startBroker("node-groups", Map.of("tbmq.redis.slot-groups", "4", "tbmq.kafka.topic-prefix", "groups.",
                "tbmq.redis.memory-check-interval", "1s"));
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

    @Test
    void eachMastersMemoryIsExportedAndOneFillingUpIsLogged() throws Exception {
        List<RedisNode> masters = it.stack().redisCluster().orElseThrow().nodes();
        Awaitility.await().atMost(20, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() -> {
            String metrics = broker.get("/q/metrics");
            for (RedisNode m : masters) {
                assertThat(gauge(metrics, "tbmq_redis_memory_used_bytes", m.address())).as(m.address()).isPositive();
                assertThat(gauge(metrics, "tbmq_redis_memory_max_bytes", m.address())).as(m.address()).isEqualTo(maxmemory(m));
            }
        });
        RedisNode filling = masters.get(1);
        long before = maxmemory(filling);
        // At what it uses now: over 90 % whatever a connection adds or takes (noeviction evicts nothing).
        long max = usedMemory(filling);
        RedisCli.command(filling.port(), "CONFIG SET maxmemory " + max);
        String warning = "Redis master " + filling.address() + " uses ";
        try {
            Awaitility.await().atMost(20, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() -> {
                assertThat(gauge(broker.get("/q/metrics"), "tbmq_redis_memory_max_bytes", filling.address())).isEqualTo(max);
                assertThat(java.nio.file.Files.readString(broker.log())).contains(warning).contains("% of its maxmemory (");
            });
            Thread.sleep(3_500); // three more checks
            assertThat(java.nio.file.Files.readString(broker.log()).split(java.util.regex.Pattern.quote(warning), -1))
                    .as("said once, not at every check").hasSize(2);
        } finally {
            RedisCli.command(filling.port(), "CONFIG SET maxmemory " + before);
        }
        String cleared = before == 0 ? " has no maxmemory now" : " uses ";
        Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> java.nio.file.Files.readString(broker.log())
                .lines().anyMatch(l -> l.contains("Redis master " + filling.address() + cleared) && l.endsWith(" now")));
    }

    @Test
    void aMasterThatWouldDropStoredMessagesOnceFullIsExportedAndLogged() throws Exception {
        List<RedisNode> masters = it.stack().redisCluster().orElseThrow().nodes();
        RedisNode cache = masters.get(2);
        long before = maxmemory(cache);
        // A cache's settings, as an external Redis service may have them: far from full, but it would evict.
        RedisCli.command(cache.port(), "CONFIG SET maxmemory 1073741824");
        RedisCli.command(cache.port(), "CONFIG SET maxmemory-policy volatile-lru");
        try {
            Awaitility.await().atMost(20, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() -> {
                String metrics = broker.get("/q/metrics");
                assertThat(gauge(metrics, "tbmq_redis_memory_evicting", cache.address())).isEqualTo(1.0);
                assertThat(gauge(metrics, "tbmq_redis_memory_evicting", masters.get(0).address())).isZero();
                assertThat(java.nio.file.Files.readString(broker.log()))
                        .contains("Redis master " + cache.address() + " evicts keys when it is full (maxmemory-policy volatile-lru)");
            });
        } finally {
            RedisCli.command(cache.port(), "CONFIG SET maxmemory-policy noeviction");
            RedisCli.command(cache.port(), "CONFIG SET maxmemory " + before);
        }
        Awaitility.await().atMost(20, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() -> {
            assertThat(gauge(broker.get("/q/metrics"), "tbmq_redis_memory_evicting", cache.address())).isZero();
            assertThat(java.nio.file.Files.readString(broker.log())).contains("Redis master " + cache.address() + " no longer evicts keys");
        });
    }

    /** A gauge of one master in a /q/metrics page. */
    private static double gauge(String metrics, String name, String master) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + "{") && line.contains("master=\"" + master + "\"")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return Double.NaN;
    }

    private static long maxmemory(RedisNode node) {
        // *2 $9 maxmemory $N <value>
        String[] parts = RedisCli.command(node.port(), "CONFIG GET maxmemory").split("\r\n");
        return Long.parseLong(parts[4]);
    }

    private static long usedMemory(RedisNode node) {
        for (String line : RedisCli.command(node.port(), "INFO memory").split("\r\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()));
            }
        }
        throw new IllegalStateException("no used_memory from " + node.address());
    }
}
