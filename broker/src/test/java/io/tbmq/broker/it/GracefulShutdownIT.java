package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.RedisCli;

/**
 * A node that drains (SIGTERM, as in a rolling restart) loses none of its DEVICE subscribers'
 * acknowledgements: clients may still acknowledge what they have before they are told to
 * disconnect, and what they acknowledged reaches Redis before the node exits. Otherwise those
 * messages come again, with DUP, after the client reconnects. Each test drains a node of its own
 * on the shared stack and starts it again with the same id.
 */
class GracefulShutdownIT {
    private static final int SESSION_EXPIRY = 600;
    private final ItStack it = ItStack.get();

    @Test
    void clientsAcknowledgeWhatTheyHaveBeforeTheDisconnectAndOnlyTheUnacknowledgedComesAgain() throws Exception {
        String id = "drain-inflight";
        BrokerNode node = it.startBroker("drain-a", Map.of("tbmq.shutdown.acknowledgement-wait", "3s"));
        try {
            RawClient c = subscriber(node, id, "drain/inflight/#");
            publish(node, "drain/inflight/t", 2);
            RawClient.Received first = c.nextPublish(10_000);
            RawClient.Received second = c.nextPublish(10_000);
            assertThat(List.of(first.payload(), second.payload())).containsExactly("m0", "m1");

            CompletableFuture<Void> stopped = CompletableFuture.runAsync(() -> node.stop(Duration.ofSeconds(30)));
            MqttMessage early = c.nextPacket(1_000);
            ReferenceCountUtil.release(early);
            assertThat(early).as("no DISCONNECT while messages wait for their PUBACKs").isNull();
            c.ack(MqttMessageType.PUBACK, first.packetId());
            MqttMessage disconnect = c.nextPacket(10_000);
            try {
                assertThat(disconnect).as("DISCONNECT once %s passed, the second message still unacknowledged", "3s").isNotNull();
                assertThat(disconnect.fixedHeader().messageType()).isEqualTo(MqttMessageType.DISCONNECT);
                assertThat(((MqttReasonCodeAndPropertiesVariableHeader) disconnect.variableHeader()).reasonCode())
                        .as("server shutting down").isEqualTo((byte) 0x8B);
            } finally {
                ReferenceCountUtil.release(disconnect);
                c.close();
            }
            stopped.get(40, TimeUnit.SECONDS);

            node.start(Duration.ofSeconds(60));
            try (RawClient again = reconnect(node, id)) {
                RawClient.Received resent = again.nextPublish(10_000);
                assertThat(resent).as("the unacknowledged message").isNotNull();
                assertThat(resent.payload()).isEqualTo("m1");
                assertThat(resent.dup()).isTrue();
                again.ack(MqttMessageType.PUBACK, resent.packetId());
                assertThat(again.nextPublish(1_000)).as("the message acknowledged while the node drained").isNull();
            }
        } finally {
            node.stop(Duration.ofSeconds(30));
        }
    }

    @Test
    void anAcknowledgementStillGatheredWhenTheNodeStopsReachesRedis() throws Exception {
        String id = "drain-gathered";
        // Acknowledgements wait a flush interval to go to Redis together: here long past the stop.
        BrokerNode node = it.startBroker("drain-b", Map.of("tbmq.redis.flush-interval", "30s"));
        try {
            try (RawClient c = subscriber(node, id, "drain/gathered/#")) {
                publish(node, "drain/gathered/t", 1);
                RawClient.Received r = c.nextPublish(10_000);
                assertThat(r).isNotNull();
                assertThat(zcard(id)).as("stored until acknowledged").isEqualTo(1);
                c.ack(MqttMessageType.PUBACK, r.packetId());
                Thread.sleep(300);
                assertThat(zcard(id)).as("the acknowledgement still gathered").isEqualTo(1);
                node.stop(Duration.ofSeconds(30));
            }
            assertThat(node.process().exitCode()).as("clean exit on SIGTERM").isIn(0, 143);
            assertThat(zcard(id)).as("removed before the node exited").isZero();

            node.start(Duration.ofSeconds(60));
            try (RawClient again = reconnect(node, id)) {
                assertThat(again.nextPublish(1_000)).as("the acknowledged message").isNull();
            }
        } finally {
            node.stop(Duration.ofSeconds(30));
        }
    }

    @Test
    void aSessionThatEndsWithItsConnectionIsNotWaitedFor() throws Exception {
        BrokerNode node = it.startBroker("drain-c", Map.of("tbmq.shutdown.acknowledgement-wait", "30s"));
        try {
            RawClient c = new RawClient(node.mqttPort(), MqttVersion.MQTT_5);
            c.connect("drain-clean", "alice", true, 0);
            c.subscribe("drain/clean/#", 1);
            publish(node, "drain/clean/t", 1);
            assertThat(c.nextPublish(10_000)).as("in flight, never acknowledged").isNotNull();
            long start = System.nanoTime();
            CompletableFuture<Void> stopped = CompletableFuture.runAsync(() -> node.stop(Duration.ofSeconds(60)));
            MqttMessage disconnect = c.nextPacket(20_000);
            try {
                assertThat(disconnect).as("DISCONNECT").isNotNull();
                assertThat(disconnect.fixedHeader().messageType()).isEqualTo(MqttMessageType.DISCONNECT);
                // Its messages are not sent again after a reconnect anyway: waiting for them gains nothing.
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not held for the 30 s wait")
                        .isLessThan(Duration.ofSeconds(15));
            } finally {
                ReferenceCountUtil.release(disconnect);
                c.close();
            }
            stopped.get(70, TimeUnit.SECONDS);
        } finally {
            node.stop(Duration.ofSeconds(30));
        }
    }

    private static RawClient subscriber(BrokerNode node, String clientId, String filter) throws Exception {
        RawClient c = new RawClient(node.mqttPort(), MqttVersion.MQTT_5);
        c.connect(clientId, "alice", true, SESSION_EXPIRY);
        c.subscribe(filter, 1);
        return c;
    }

    private static RawClient reconnect(BrokerNode node, String clientId) throws Exception {
        RawClient c = new RawClient(node.mqttPort(), MqttVersion.MQTT_5);
        assertThat(c.connect(clientId, "alice", false, SESSION_EXPIRY).variableHeader().isSessionPresent())
                .as("session present").isTrue();
        return c;
    }

    private static void publish(BrokerNode node, String topic, int count) {
        Mqtt5BlockingClient pub = Clients.alice5(node, "pub-" + topic.replace('/', '-') + System.nanoTime());
        for (int i = 0; i < count; i++) {
            pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(("m" + i).getBytes()).send();
        }
        pub.disconnect();
    }

    private long zcard(String clientId) {
        String reply = RedisCli.command(it.stack().redis().orElseThrow().port(), "ZCARD {" + clientId + "}_messages");
        return Long.parseLong(reply.trim().substring(1).trim());
    }
}
