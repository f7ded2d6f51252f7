package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.packetId;
import static io.tbmq.broker.testing.WireClient.reasonCode;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.WireClient;

/** PUBREC from a subscriber (§3.5): the server's PUBREL. */
class PubRecHandlerTest {

    @Test
    void pubrecIsAnsweredWithPubrel() {
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 2, 0)) {
            f.publisher.publish("d/x", 2, "exactly once", 1);
            MqttPublishMessage m = f.subscriber.expect(MqttMessageType.PUBLISH);
            assertThat(m.fixedHeader().qosLevel().value()).isEqualTo(2);
            f.subscriber.ack(MqttMessageType.PUBREC, m.variableHeader().packetId());
            MqttMessage rel = f.subscriber.expect(MqttMessageType.PUBREL);
            assertThat(packetId(rel)).isEqualTo(m.variableHeader().packetId());
            assertThat(reasonCode(rel)).isZero();
        }
    }

    @Test
    void unknownPacketIdGetsPubrel0x92() {
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 2, 0)) {
            f.subscriber.ack(MqttMessageType.PUBREC, 4242);
            assertThat(reasonCode(f.subscriber.expect(MqttMessageType.PUBREL))).isEqualTo(0x92);
        }
    }

    @Test
    void pubrelIsResentAfterReconnectWhenPubcompIsMissing() {
        // [MQTT-4.4.0-1]: PUBREL, not the PUBLISH, once PUBREC was received
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 2, 300)) {
            f.publisher.publish("d/x", 2, "q2", 1);
            MqttPublishMessage m = f.subscriber.expect(MqttMessageType.PUBLISH);
            f.subscriber.ack(MqttMessageType.PUBREC, m.variableHeader().packetId());
            f.subscriber.expect(MqttMessageType.PUBREL);
            f.subscriber.drop();
            try (WireClient again = f.broker.client(MqttVersion.MQTT_5)) {
                DeliveryFixture.connectSubscriber(again, false, 300);
                MqttMessage rel = again.expect(MqttMessageType.PUBREL);
                assertThat(packetId(rel)).isEqualTo(m.variableHeader().packetId());
            }
        }
    }
}
