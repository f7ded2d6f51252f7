package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.packetId;
import static io.tbmq.broker.testing.WireClient.reasonCode;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** PUBREL from a publisher (§3.6): PUBCOMP, and the QoS 2 id released. */
class PubRelHandlerTest {

    @Test
    void pubrelIsAnsweredWithPubcompAndFreesTheId() {
        try (TestBroker broker = new TestBroker(); WireClient c = broker.client(MqttVersion.MQTT_5)) {
            c.connectAccepted("p", true);
            c.publish("t", 2, "one", 5);
            c.expect(MqttMessageType.PUBREC);
            c.ack(MqttMessageType.PUBREL, 5);
            MqttMessage comp = c.expect(MqttMessageType.PUBCOMP);
            assertThat(packetId(comp)).isEqualTo(5);
            assertThat(reasonCode(comp)).isZero();
            // the id is free: the same id is a new message now
            c.publish("t", 2, "two", 5);
            c.expect(MqttMessageType.PUBREC);
            assertThat(broker.log().appended()).hasSize(2);
        }
    }

    @Test
    void unknownIdGetsPubcomp0x92InV5AndPlainPubcompInV3() {
        try (TestBroker broker = new TestBroker(); WireClient v5 = broker.client(MqttVersion.MQTT_5);
                WireClient v3 = broker.client(MqttVersion.MQTT_3_1_1)) {
            v5.connectAccepted("a", true);
            v5.ack(MqttMessageType.PUBREL, 77);
            assertThat(reasonCode(v5.expect(MqttMessageType.PUBCOMP))).isEqualTo(0x92);
            v3.connectAccepted("b", true);
            v3.ack(MqttMessageType.PUBREL, 77);
            assertThat(packetId(v3.expect(MqttMessageType.PUBCOMP))).isEqualTo(77);
        }
    }
}
