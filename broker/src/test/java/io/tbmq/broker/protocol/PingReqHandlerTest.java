package io.tbmq.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** PINGREQ (§3.12): PINGRESP, byte for byte. */
class PingReqHandlerTest {

    @Test
    void pingreqIsAnsweredWithPingresp() {
        try (TestBroker broker = new TestBroker(); WireClient c = broker.client(MqttVersion.MQTT_3_1_1)) {
            c.connectAccepted("p", true);
            c.rawBytes();
            c.sendHex("c0 00");
            assertThat(c.rawBytes()).containsExactly((byte) 0xD0, (byte) 0x00);
        }
    }

    @Test
    void pingreqWithABodyIsMalformed() {
        try (TestBroker broker = new TestBroker(); WireClient c = broker.client(MqttVersion.MQTT_5)) {
            c.connectAccepted("p", true);
            c.rawBytes();
            c.sendHex("c0 01 00");
            assertThat(c.rawBytes()).startsWith((byte) 0xE0);
            assertThat(c.isOpen()).isFalse();
        }
    }
}
