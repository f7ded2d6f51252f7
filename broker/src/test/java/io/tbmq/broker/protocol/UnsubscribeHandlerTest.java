package io.tbmq.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttUnsubAckMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** UNSUBSCRIBE (§3.10, §3.11). */
class UnsubscribeHandlerTest {

    @Test
    void unsubscribeStopsDeliveryAndReportsPerFilter() {
        try (TestBroker broker = new TestBroker(); WireClient sub = broker.client(MqttVersion.MQTT_5);
                WireClient pub = broker.client(MqttVersion.MQTT_5)) {
            sub.connectAccepted("s", true);
            pub.connectAccepted("p", true);
            sub.subscribe(1, "u/#", 0);
            sub.expect(MqttMessageType.SUBACK);
            sub.send(MqttMessageBuilders.unsubscribe().messageId(2).addTopicFilter("u/#").addTopicFilter("never").build());
            MqttUnsubAckMessage ack = sub.expect(MqttMessageType.UNSUBACK);
            assertThat(ack.variableHeader().messageId()).isEqualTo(2);
            assertThat(ack.payload().unsubscribeReasonCodes()).containsExactly((short) 0x00, (short) 0x11);
            pub.publish("u/x", 0, "after", 0);
            sub.expectNothing();
            assertThat(broker.core().services().trie().size()).isZero();
        }
    }

    @Test
    void v311UnsubackHasNoPayload() {
        try (TestBroker broker = new TestBroker(); WireClient c = broker.client(MqttVersion.MQTT_3_1_1)) {
            c.connectAccepted("s", true);
            c.rawBytes();
            c.unsubscribe(9, "nothing");
            byte[] raw = c.rawBytes();
            assertThat(raw).containsExactly((byte) 0xB0, (byte) 0x02, (byte) 0x00, (byte) 0x09);
        }
    }
}
