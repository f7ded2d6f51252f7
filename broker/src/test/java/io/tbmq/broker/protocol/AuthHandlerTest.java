package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.reasonCode;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** AUTH (§3.15): refused cleanly, since no enhanced authentication method is configured. */
class AuthHandlerTest {

    @Test
    void authAfterConnectIsAProtocolErrorAndNothingElseIsAffected() {
        try (TestBroker broker = new TestBroker(); WireClient c = broker.client(MqttVersion.MQTT_5);
                WireClient other = broker.client(MqttVersion.MQTT_5)) {
            other.connectAccepted("other", true);
            c.connectAccepted("a", true);
            c.sendHex("f0 00"); // AUTH, reason 0 (success) implied
            assertThat(reasonCode(c.expect(MqttMessageType.DISCONNECT))).isEqualTo(0x82);
            assertThat(c.isOpen()).isFalse();
            other.sendHex("c0 00");
            other.expect(MqttMessageType.PINGRESP);
        }
    }

    @Test
    void authIsMalformedBeforeMqtt5() {
        try (TestBroker broker = new TestBroker(); WireClient c = broker.client(MqttVersion.MQTT_3_1_1)) {
            c.connectAccepted("a", true);
            c.rawBytes();
            c.sendHex("f0 00");
            assertThat(c.rawBytes()).isEmpty();
            assertThat(c.isOpen()).isFalse();
        }
    }
}
