package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** PUBCOMP from a subscriber (§3.7): the QoS 2 delivery completes and the window moves on. */
class PubCompHandlerTest {

    @Test
    void pubcompCompletesTheDeliveryAndFreesTheWindow() {
        TestBroker broker = new TestBroker(Map.of("tbmq.mqtt.max-inflight-to-client", "1"));
        try (DeliveryFixture f = new DeliveryFixture(broker, MqttVersion.MQTT_5, 2, 300)) {
            f.publisher.publish("d/x", 2, "first", 1);
            f.publisher.publish("d/x", 2, "second", 2);
            MqttPublishMessage first = f.subscriber.expect(MqttMessageType.PUBLISH);
            f.subscriber.expectNothing();
            int id = first.variableHeader().packetId();
            f.subscriber.ack(MqttMessageType.PUBREC, id);
            f.subscriber.expect(MqttMessageType.PUBREL);
            f.subscriber.expectNothing();
            f.subscriber.ack(MqttMessageType.PUBCOMP, id);
            assertThat(text(f.subscriber.expect(MqttMessageType.PUBLISH))).isEqualTo("second");
            assertThat(f.broker.core().services().sessions().get("sub").inflightCount()).isEqualTo(1);
        }
    }

    @Test
    void completedQos2IsNotResentAfterReconnect() {
        try (DeliveryFixture f = new DeliveryFixture(MqttVersion.MQTT_5, 2, 300)) {
            f.publisher.publish("d/x", 2, "done", 1);
            MqttPublishMessage m = f.subscriber.expect(MqttMessageType.PUBLISH);
            f.subscriber.ack(MqttMessageType.PUBREC, m.variableHeader().packetId());
            f.subscriber.expect(MqttMessageType.PUBREL);
            f.subscriber.ack(MqttMessageType.PUBCOMP, m.variableHeader().packetId());
            f.subscriber.drop();
            try (WireClient again = f.broker.client(MqttVersion.MQTT_5)) {
                DeliveryFixture.connectSubscriber(again, false, 300);
                again.expectNothing();
            }
        }
    }
}
