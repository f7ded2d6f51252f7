package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.packetId;
import static io.tbmq.broker.testing.WireClient.reasonCode;
import static io.tbmq.broker.testing.WireClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** PUBLISH from clients (§3.3): the message log, acks, aliases, refusals. */
class PublishHandlerTest {
    private final TestBroker broker = new TestBroker();

    @AfterEach
    void close() {
        broker.close();
    }

    private WireClient connected(String id, MqttVersion version) {
        WireClient c = broker.client(version);
        c.connectAccepted(id, true);
        return c;
    }

    @Test
    void everyPublishGoesThroughTheMessageLogBeforeItsAck() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            broker.log().hold();
            pub.publish("a/b", 1, "one", 7);
            pub.expectNothing();
            assertThat(broker.log().appended()).extracting(PublishMessage::topic).containsExactly("a/b");
            broker.log().release(false);
            MqttMessage ack = pub.expect(MqttMessageType.PUBACK);
            assertThat(packetId(ack)).isEqualTo(7);
            assertThat(reasonCode(ack)).isZero();
        }
    }

    @Test
    void acksLeaveInArrivalOrderEvenWhenTheLogAnswersOutOfOrder() {
        // [MQTT-4.6.0-2] PUBACKs in the order the PUBLISHes were received
        try (WireClient pub = connected("p", MqttVersion.MQTT_3_1_1)) {
            broker.log().hold();
            for (int id = 1; id <= 5; id++) {
                pub.publish("t/" + id, 1, "m" + id, id);
            }
            broker.log().release(true);
            List<Integer> ids = pub.receiveAll().stream().map(WireClient::packetId).toList();
            assertThat(ids).containsExactly(1, 2, 3, 4, 5);
        }
    }

    @Test
    void qos2PublishIsRoutedOnceEvenWhenResent() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            pub.publish("q2", 2, "x", 9);
            assertThat(packetId(pub.expect(MqttMessageType.PUBREC))).isEqualTo(9);
            pub.publish("q2", 2, "x", 9);
            pub.expect(MqttMessageType.PUBREC);
            assertThat(broker.log().appended()).hasSize(1);
            pub.ack(MqttMessageType.PUBREL, 9);
            assertThat(reasonCode(pub.expect(MqttMessageType.PUBCOMP))).isZero();
        }
    }

    @Test
    void logFailureIsReasonCode0x80ForV5() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            broker.log().fail();
            pub.publish("x", 1, "lost?", 3);
            assertThat(reasonCode(pub.expect(MqttMessageType.PUBACK))).isEqualTo(0x80);
        }
    }

    @Test
    void logFailureClosesAV3ConnectionInsteadOfAcking() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_3_1_1)) {
            broker.log().fail();
            pub.publish("x", 1, "lost?", 3);
            pub.expectNothing();
            assertThat(pub.isOpen()).as("no PUBACK, so the client re-sends after reconnecting").isFalse();
        }
    }

    @Test
    void aclRefusalIs0x87InV5AndStillAckedInV3() {
        try (WireClient v5 = broker.client(MqttVersion.MQTT_5); WireClient v3 = broker.client(MqttVersion.MQTT_3_1_1)) {
            v5.connect("b5", true, "bob", "secret", MqttProperties.NO_PROPERTIES);
            v5.publish("alice/x", 1, "no", 1);
            assertThat(reasonCode(v5.expect(MqttMessageType.PUBACK))).isEqualTo(0x87);
            v3.connect("b3", true, "bob", "secret", MqttProperties.NO_PROPERTIES);
            v3.publish("alice/x", 1, "no", 1);
            v3.expect(MqttMessageType.PUBACK);
            assertThat(broker.log().appended()).isEmpty();
        }
    }

    @Test
    void aReasonStringIsLeftOutWhereItWouldPassTheClientsMaximumPacketSize() {
        // [MQTT-3.4.2-2]: the refusal's reason names the topic, which would make this PUBACK about 110 bytes.
        try (WireClient small = broker.client(MqttVersion.MQTT_5); WireClient large = broker.client(MqttVersion.MQTT_5)) {
            MqttProperties limit = new MqttProperties();
            limit.add(new MqttProperties.IntegerProperty(MqttPropertyType.MAXIMUM_PACKET_SIZE.value(), 48));
            small.connect("b-small", true, "bob", "secret", limit);
            String topic = "alice/" + "x".repeat(60);
            small.rawBytes();
            small.publish(topic, 1, "no", 1);
            byte[] ack = small.rawBytes();
            assertThat(ack.length).as("PUBACK 0x87 without its reason").isLessThanOrEqualTo(48);
            assertThat(ack[0] & 0xF0).isEqualTo(0x40);
            assertThat(ack[4] & 0xFF).isEqualTo(0x87);

            large.connect("b-large", true, "bob", "secret", MqttProperties.NO_PROPERTIES);
            large.publish(topic, 1, "no", 1);
            var header = (io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader) large.expect(MqttMessageType.PUBACK).variableHeader();
            assertThat((String) header.properties().getProperty(MqttPropertyType.REASON_STRING.value()).value()).contains(topic);
        }
    }

    @Test
    void clientIdTemplateGrantsOnlyTheClientsOwnTopic() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            c.connect("dev7", true, "bob", "secret", MqttProperties.NO_PROPERTIES);
            c.publish("devices/dev7/out", 1, "mine", 1);
            assertThat(reasonCode(c.expect(MqttMessageType.PUBACK))).isZero();
            c.publish("devices/dev8/out", 1, "theirs", 2);
            assertThat(reasonCode(c.expect(MqttMessageType.PUBACK))).isEqualTo(0x87);
        }
    }

    @Test
    void sysTopicsAreNeverPublishable() {
        try (WireClient c = connected("p", MqttVersion.MQTT_5)) {
            c.publish("$SYS/broker/load", 1, "fake", 1);
            assertThat(reasonCode(c.expect(MqttMessageType.PUBACK))).isEqualTo(0x87);
        }
    }

    @Test
    void wildcardInTopicNameDisconnectsWith0x90() {
        // [MQTT-3.3.2-2]
        try (WireClient c = connected("p", MqttVersion.MQTT_5)) {
            c.publish("a/+/b", 0, "x", 0);
            assertThat(reasonCode(c.expect(MqttMessageType.DISCONNECT))).isEqualTo(0x90);
            assertThat(c.isOpen()).isFalse();
        }
    }

    @Test
    void tooManyTopicLevelsIsRefusedButTheSessionContinues() {
        try (TestBroker shallow = new TestBroker(Map.of("tbmq.mqtt.max-topic-levels", "3"));
                WireClient c = shallow.client(MqttVersion.MQTT_5)) {
            c.connectAccepted("p", true);
            c.publish("a/b/c/d", 1, "deep", 1);
            assertThat(reasonCode(c.expect(MqttMessageType.PUBACK))).isEqualTo(0x90);
            assertThat(c.isOpen()).isTrue();
        }
    }

    @Test
    void topicAliasIsSetThenUsed() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5); WireClient sub = connected("s", MqttVersion.MQTT_5)) {
            sub.subscribe(1, "alias/#", 0);
            sub.expect(MqttMessageType.SUBACK);
            pub.publish("alias/long/topic", 0, false, "first", 0, alias(3));
            pub.publish("", 0, false, "second", 0, alias(3));
            List<MqttMessage> got = sub.receiveAll();
            assertThat(got).hasSize(2);
            assertThat(((MqttPublishMessage) got.get(1)).variableHeader().topicName()).isEqualTo("alias/long/topic");
            assertThat(text((MqttPublishMessage) got.get(1))).isEqualTo("second");
        }
    }

    @Test
    void theTopicAliasCountsTowardsTheClientsMaximumPacketSizeAndIsLeftOutWhenOnlyThatFits() {
        // [MQTT-3.1.2-24]: "t" with 94 bytes of payload is exactly 100 bytes on the wire, 103 with a Topic Alias.
        try (WireClient pub = connected("p", MqttVersion.MQTT_5); WireClient sub = broker.client(MqttVersion.MQTT_5)) {
            MqttProperties limits = new MqttProperties();
            limits.add(new MqttProperties.IntegerProperty(MqttPropertyType.MAXIMUM_PACKET_SIZE.value(), 100));
            limits.add(new MqttProperties.IntegerProperty(MqttPropertyType.TOPIC_ALIAS_MAXIMUM.value(), 1));
            sub.connect("s", true, "alice", TestBroker.PASSWORD, limits);
            sub.subscribe(1, "t", 0);
            sub.expect(MqttMessageType.SUBACK);
            sub.rawBytes();
            pub.publish("t", 0, "x".repeat(94), 0);
            assertThat(sub.rawBytes()).as("the PUBLISH, without an alias").hasSize(100);
            pub.publish("t", 0, "small", 0);
            MqttPublishMessage small = sub.expect(MqttMessageType.PUBLISH);
            assertThat(small.variableHeader().properties().getProperty(MqttPropertyType.TOPIC_ALIAS.value()))
                    .as("an alias where it fits").isNotNull();
        }
    }

    @Test
    void unknownOrOutOfRangeTopicAliasIsAProtocolError() {
        try (WireClient unknown = connected("u", MqttVersion.MQTT_5); WireClient range = connected("r", MqttVersion.MQTT_5)) {
            unknown.publish("", 0, false, "?", 0, alias(5));
            assertThat(reasonCode(unknown.expect(MqttMessageType.DISCONNECT))).isEqualTo(0x82);
            range.publish("t", 0, false, "?", 0, alias(65));
            assertThat(reasonCode(range.expect(MqttMessageType.DISCONNECT))).isEqualTo(0x94);
        }
    }

    @Test
    void receiveMaximumExceededDisconnectsWith0x93() {
        try (TestBroker small = new TestBroker(Map.of("tbmq.mqtt.receive-maximum", "2"));
                WireClient c = small.client(MqttVersion.MQTT_5)) {
            c.connectAccepted("greedy", true);
            for (int id = 1; id <= 3; id++) {
                c.publish("q", 2, "m", id); // QoS 2 without PUBREL keeps the quota used
            }
            List<MqttMessage> got = c.receiveAll();
            assertThat(got).extracting(m -> m.fixedHeader().messageType())
                    .containsExactly(MqttMessageType.PUBREC, MqttMessageType.PUBREC, MqttMessageType.DISCONNECT);
            assertThat(reasonCode(got.get(2))).isEqualTo(0x93);
        }
    }

    @Test
    void userPropertiesAndCorrelationDataPassThrough() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5); WireClient sub = connected("s", MqttVersion.MQTT_5)) {
            sub.subscribe(1, "rr/req", 1);
            sub.expect(MqttMessageType.SUBACK);
            MqttProperties p = new MqttProperties();
            p.add(new MqttProperties.UserProperty("k", "v"));
            p.add(new MqttProperties.StringProperty(MqttPropertyType.RESPONSE_TOPIC.value(), "rr/resp"));
            p.add(new MqttProperties.BinaryProperty(MqttPropertyType.CORRELATION_DATA.value(), new byte[] {1, 2, 3}));
            p.add(new MqttProperties.StringProperty(MqttPropertyType.CONTENT_TYPE.value(), "text/plain"));
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.PAYLOAD_FORMAT_INDICATOR.value(), 1));
            pub.publish("rr/req", 1, false, "ask", 1, p);
            MqttPublishMessage m = sub.expect(MqttMessageType.PUBLISH);
            MqttProperties got = m.variableHeader().properties();
            assertThat(got.getProperties(MqttPropertyType.USER_PROPERTY.value())).hasSize(1);
            assertThat(got.getProperty(MqttPropertyType.RESPONSE_TOPIC.value()).value()).isEqualTo("rr/resp");
            assertThat((byte[]) got.getProperty(MqttPropertyType.CORRELATION_DATA.value()).value()).containsExactly(1, 2, 3);
            assertThat(got.getProperty(MqttPropertyType.CONTENT_TYPE.value()).value()).isEqualTo("text/plain");
            assertThat(got.getProperty(MqttPropertyType.PAYLOAD_FORMAT_INDICATOR.value()).value()).isEqualTo(1);
        }
    }

    @Test
    void emptyRetainedPayloadDeletesTheRetainedMessage() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_3_1_1)) {
            pub.publish("r/t", 1, true, "kept", 1, MqttProperties.NO_PROPERTIES);
            pub.expect(MqttMessageType.PUBACK);
            assertThat(broker.core().services().retained().size()).isEqualTo(1);
            pub.publish("r/t", 1, true, "", 2, MqttProperties.NO_PROPERTIES);
            pub.expect(MqttMessageType.PUBACK);
            assertThat(broker.core().services().retained().size()).isZero();
        }
    }

    private static MqttProperties alias(int alias) {
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.IntegerProperty(MqttPropertyType.TOPIC_ALIAS.value(), alias));
        return p;
    }
}
