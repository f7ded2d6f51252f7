package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.LocalStack;
import io.tbmq.localstack.ManagedProcess;
import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisNode;

/**
 * Redis unreachable at runtime (the process stopped with SIGSTOP) and at startup: the node turns
 * not ready, v5 publishers get PUBACK 0x80 instead of a silent drop, and it recovers by itself.
 */
class StoreDownIT {
    private static ItStack it;

    @BeforeAll
    static void start() {
        // A short batch timeout: what a full master does past it, seen in seconds rather than in minutes.
        it = ItStack.isolated("store-down-stack", Map.of("tbmq.kafka.consumer-batch-timeout", "2s"));
    }

    @AfterAll
    static void stop() {
        it.close();
    }

    @Test
    void redisHangingMakesTheNodeUnreadyAndPublishersAreToldThenItRecovers() {
        BrokerNode broker = it.broker();
        ManagedProcess redis = it.stack().redis().orElseThrow().process();
        Mqtt5BlockingClient c = Clients.alice5(broker, "store-down");
        double refusedBefore = metric(broker, "tbmq_publish_refused_total{reason=\"store-down\"");
        redis.suspend();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> broker.status("/q/health/ready") == 503);
            assertThat(broker.get("/q/health/ready")).contains("redis unreachable");
            assertThatThrownBy(() -> c.publishWith().topic("down/x").qos(MqttQos.AT_LEAST_ONCE).payload("x".getBytes()).send())
                    .isInstanceOfSatisfying(Mqtt5PubAckException.class, e -> assertThat(e.getMqttMessage().getReasonCode())
                            .isEqualTo(Mqtt5PubAckReasonCode.UNSPECIFIED_ERROR));
            // What TbmqRedisUnreachable alerts on, and the refusal counted by its reason.
            assertThat(metric(broker, "tbmq_redis_reachable")).isZero();
            assertThat(metric(broker, "tbmq_kafka_reachable")).isEqualTo(1.0);
            assertThat(metric(broker, "tbmq_publish_refused_total{reason=\"store-down\"") - refusedBefore).isEqualTo(1.0);
        } finally {
            redis.resume();
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> broker.status("/q/health/ready") == 200);
        assertThat(metric(broker, "tbmq_redis_reachable")).isEqualTo(1.0);
        c.publishWith().topic("down/x").qos(MqttQos.AT_LEAST_ONCE).payload("after".getBytes()).send();
        c.disconnect();
    }

    @Test
    void aFullRedisMasterSendsOtherSubscribersTheirCopiesOnceHoweverLongItStaysFull() throws Exception {
        BrokerNode broker = it.broker();
        int redis = it.stack().redis().orElseThrow().port();
        // Another test may have stopped Redis: reachable again, before it fills.
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> broker.status("/q/health/ready") == 200);
        // An offline DEVICE session, whose copies go into Redis, and a connected in-memory one.
        RawClient device = new RawClient(broker.mqttPort(), MqttVersion.MQTT_5);
        device.connect("full-device", "alice", true, 600);
        device.subscribe("full/t", 1);
        device.close();
        RawClient memory = new RawClient(broker.mqttPort(), MqttVersion.MQTT_5);
        memory.connect("full-memory", "alice", true, 0);
        memory.subscribe("full/t", 1);
        RedisCli.command(redis, "CONFIG SET maxmemory-policy noeviction");
        RedisCli.command(redis, "CONFIG SET maxmemory 1");
        try {
            Mqtt5BlockingClient pub = Clients.alice5(broker, "full-publisher");
            for (int i = 0; i < 5; i++) {
                pub.publishWith().topic("full/t").qos(MqttQos.AT_LEAST_ONCE).payload(("m" + i).getBytes()).send();
            }
            pub.disconnect();
            List<String> got = new ArrayList<>();
            // Three batch timeouts and more: every one of them used to send the five again, with DUP.
            long until = System.currentTimeMillis() + 8_000;
            for (RawClient.Received r; System.currentTimeMillis() < until && (r = memory.nextPublish(until - System.currentTimeMillis())) != null;) {
                got.add(r.payload() + (r.dup() ? " (DUP)" : ""));
                memory.ack(MqttMessageType.PUBACK, r.packetId());
            }
            assertThat(got).as("each once, while the DEVICE copies wait for the full master").containsExactly("m0", "m1", "m2", "m3", "m4");
            assertThat(java.nio.file.Files.readString(broker.log())).contains("waits for the store after 2000 ms");
            assertThat(stalledSeconds(broker, "msg.all")).as("what an operator sees: how long the routing consumer has waited")
                    .isGreaterThan(5.0);
        } finally {
            RedisCli.command(redis, "CONFIG SET maxmemory 0");
            memory.close();
        }
        // With room again, the writes that kept trying store the DEVICE copies: nothing was lost.
        RawClient back = new RawClient(broker.mqttPort(), MqttVersion.MQTT_5);
        try {
            Awaitility.await().atMost(Duration.ofSeconds(15))
                    .until(() -> RedisCli.command(redis, "ZCARD {full-device}_messages").startsWith(":5"));
            assertThat(back.connect("full-device", "alice", false, 600).variableHeader().isSessionPresent()).isTrue();
            for (int i = 0; i < 5; i++) {
                RawClient.Received r = back.nextPublish(10_000);
                assertThat(r).as("message %d", i).isNotNull();
                assertThat(r.payload()).isEqualTo("m" + i);
                back.ack(MqttMessageType.PUBACK, r.packetId());
            }
            assertThat(back.nextPublish(1_000)).as("each once").isNull();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> stalledSeconds(broker, "msg.all") == 0);
        } finally {
            back.close();
        }
    }

    /** tbmq_kafka_consumer_stalled_seconds of the topic whose name ends with {@code topic}. */
    private static double stalledSeconds(BrokerNode broker, String topic) {
        return broker.get("/q/metrics").lines().filter(l -> l.startsWith("tbmq_kafka_consumer_stalled_seconds{") && l.contains(topic + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).max().orElseThrow();
    }

    /** The value of the series whose line starts with {@code series}, summed over label sets (0 when absent). */
    private static double metric(BrokerNode broker, String series) {
        return broker.get("/q/metrics").lines().filter(l -> l.startsWith(series + (series.contains("{") ? "" : " ")) || l.startsWith(series + "{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void redisDownAtStartupKeepsTheNodeUnreadyUntilItComes() throws Exception {
        LocalStack stack = it.stack();
        RedisNode redis = stack.redis().orElseThrow();
        redis.stop();
        BrokerNode late = null;
        try {
            late = new BrokerNode("node-late", ItStack.brokerJar(), stack.dir().resolve("broker-late"), io.tbmq.localstack.Ports.free(),
                    io.tbmq.localstack.Ports.free(), io.tbmq.localstack.Ports.free(), io.tbmq.localstack.Ports.free(),
                    io.tbmq.localstack.Ports.free());
            late.config(stack.brokerConfig()).config(Map.of("tbmq.kafka.topic-prefix", "late.",
                    "tbmq.security.allow-anonymous", "true"));
            BrokerNode node = late;
            Thread starter = new Thread(() -> {
                try {
                    node.start(Duration.ofSeconds(120));
                } catch (IllegalStateException expected) {
                    // not ready until Redis comes: awaited below
                }
            });
            starter.start();
            Thread.sleep(15_000);
            assertThat(node.status("/q/health/ready")).isNotEqualTo(200);
            redis.start(Duration.ofSeconds(30));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> node.status("/q/health/ready") == 200);
            starter.join(60_000);
        } finally {
            if (late != null) {
                late.stop(Duration.ofSeconds(20));
            }
        }
    }
}
