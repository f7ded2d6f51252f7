package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.LocalStack;
import io.tbmq.localstack.ManagedProcess;
import io.tbmq.localstack.RedisNode;

/**
 * Redis unreachable at runtime (the process stopped with SIGSTOP) and at startup: the node turns
 * not ready, v5 publishers get PUBACK 0x80 instead of a silent drop, and it recovers by itself.
 */
class StoreDownIT {
    private static ItStack it;

    @BeforeAll
    static void start() {
        it = ItStack.isolated("store-down-stack");
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
            assertThat(metric(broker, "tbmq_publish_refused_total{reason=\"store-down\"")).isEqualTo(1.0);
        } finally {
            redis.resume();
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> broker.status("/q/health/ready") == 200);
        assertThat(metric(broker, "tbmq_redis_reachable")).isEqualTo(1.0);
        c.publishWith().topic("down/x").qos(MqttQos.AT_LEAST_ONCE).payload("after".getBytes()).send();
        c.disconnect();
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
