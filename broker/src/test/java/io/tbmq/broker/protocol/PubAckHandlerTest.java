package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.packetId;
import static io.tbmq.broker.testing.WireClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** PUBACK from a subscriber (§3.4, §4.9 flow control towards the client). */
class PubAckHandlerTest {

    @Test
    void pubackOpensTheWindowForTheNextMessage() {
        TestBroker broker = new TestBroker(Map.of("tbmq.mqtt.max-inflight-to-client", "2"));
        try (DeliveryFixture f = new DeliveryFixture(broker, MqttVersion.MQTT_5, 1, 0)) {
            for (int i = 1; i <= 3; i++) {
                f.publisher.publish("d/x", 1, "m" + i, i);
            }
            List<MqttMessage> first = f.subscriber.receiveAll();
            assertThat(first).hasSize(2).as("window of 2");
            f.subscriber.ack(MqttMessageType.PUBACK, packetId(first.get(0)));
            MqttPublishMessage third = f.subscriber.expect(MqttMessageType.PUBLISH);
            assertThat(text(third)).isEqualTo("m3");
        }
    }

    @Test
    void unackedMessagesAreResentWithDupAfterReconnect() {
        // [MQTT-4.4.0-1]
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 1, 300)) {
            f.publisher.publish("d/x", 1, "once", 1);
            MqttPublishMessage first = f.subscriber.expect(MqttMessageType.PUBLISH);
            assertThat(first.fixedHeader().isDup()).isFalse();
            f.subscriber.drop();
            try (WireClient again = f.broker.client(MqttVersion.MQTT_5)) {
                DeliveryFixture.connectSubscriber(again, false, 300);
                MqttPublishMessage resent = again.expect(MqttMessageType.PUBLISH);
                assertThat(resent.fixedHeader().isDup()).isTrue();
                assertThat(resent.variableHeader().packetId()).isEqualTo(first.variableHeader().packetId());
                again.ack(MqttMessageType.PUBACK, resent.variableHeader().packetId());
                again.expectNothing();
            }
        }
    }

    @Test
    void aResumedConnectionGetsItsUnackedMessagesAgainOnlyAsItsNewReceiveMaximumAllows() {
        // [MQTT-4.4.0-1], and the send quota starts again at each connection's Receive Maximum [MQTT-3.3.4-9].
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 1, 300)) {
            for (int i = 1; i <= 5; i++) {
                f.publisher.publish("d/x", 1, "m" + i, i);
            }
            assertThat(f.subscriber.receiveAll()).hasSize(5);
            f.subscriber.drop();
            try (WireClient again = f.broker.client(MqttVersion.MQTT_5)) {
                again.connect("sub", false, "alice", TestBroker.PASSWORD, properties(300, MqttPropertyType.RECEIVE_MAXIMUM, 2));
                List<MqttMessage> resent = again.receiveAll();
                assertThat(resent).extracting(m -> text((MqttPublishMessage) m)).containsExactly("m1", "m2");
                assertThat(resent).allMatch(m -> m.fixedHeader().isDup());
                again.ack(MqttMessageType.PUBACK, packetId(resent.get(0)));
                MqttPublishMessage third = again.expect(MqttMessageType.PUBLISH);
                assertThat(text(third)).isEqualTo("m3");
                assertThat(third.fixedHeader().isDup()).isTrue();
                again.expectNothing();
            }
        }
    }

    @Test
    void aMessageTooLargeForTheResumedConnectionIsDroppedAndDoesNotHoldItsWindow() {
        // [MQTT-3.1.2-25]: discarded as if its delivery had completed, so what follows is delivered.
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 1, 300)) {
            f.publisher.publish("d/x", 1, "x".repeat(500), 1);
            f.subscriber.expect(MqttMessageType.PUBLISH);
            f.subscriber.drop();
            try (WireClient again = f.broker.client(MqttVersion.MQTT_5)) {
                MqttProperties p = properties(300, MqttPropertyType.RECEIVE_MAXIMUM, 1);
                p.add(new MqttProperties.IntegerProperty(MqttPropertyType.MAXIMUM_PACKET_SIZE.value(), 128));
                again.connect("sub", false, "alice", TestBroker.PASSWORD, p);
                again.expectNothing();
                f.publisher.publish("d/x", 1, "small", 2);
                assertThat(text(again.expect(MqttMessageType.PUBLISH))).isEqualTo("small");
            }
        }
    }

    private static MqttProperties properties(int sessionExpiry, MqttPropertyType type, int value) {
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), sessionExpiry));
        p.add(new MqttProperties.IntegerProperty(type.value(), value));
        return p;
    }

    @Test
    void ackedMessagesAreNotResent() {
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_3_1_1, 1, 300)) {
            f.publisher.publish("d/x", 1, "done", 1);
            MqttPublishMessage m = f.subscriber.expect(MqttMessageType.PUBLISH);
            f.subscriber.ack(MqttMessageType.PUBACK, m.variableHeader().packetId());
            f.subscriber.drop();
            try (WireClient again = f.broker.client(MqttVersion.MQTT_3_1_1)) {
                DeliveryFixture.connectSubscriber(again, false, 0);
                again.expectNothing();
            }
        }
    }
}
