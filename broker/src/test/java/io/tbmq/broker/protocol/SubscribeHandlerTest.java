package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubscriptionOption;
import io.netty.handler.codec.mqtt.MqttSubscriptionOption.RetainedHandlingPolicy;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** SUBSCRIBE (§3.8, §3.9) and what a subscription receives. */
class SubscribeHandlerTest {
    private final TestBroker broker = new TestBroker();

    @AfterEach
    void close() {
        broker.close();
    }

    private WireClient connected(String id, MqttVersion v) {
        WireClient c = broker.client(v);
        c.connectAccepted(id, true);
        return c;
    }

    private static List<Integer> codes(MqttSubAckMessage ack) {
        return ack.payload().reasonCodes();
    }

    private static MqttSubscriptionOption option(int qos, boolean noLocal, boolean rap, RetainedHandlingPolicy rh) {
        return new MqttSubscriptionOption(MqttQoS.valueOf(qos), noLocal, rap, rh);
    }

    @Test
    void grantsTheRequestedQosPerFilter() {
        try (WireClient c = connected("s", MqttVersion.MQTT_3_1_1)) {
            c.send(MqttMessageBuilders.subscribe().messageId(3).addSubscription(MqttQoS.AT_MOST_ONCE, "a")
                    .addSubscription(MqttQoS.AT_LEAST_ONCE, "b/+").addSubscription(MqttQoS.EXACTLY_ONCE, "c/#").build());
            MqttSubAckMessage ack = c.expect(MqttMessageType.SUBACK);
            assertThat(ack.variableHeader().messageId()).isEqualTo(3);
            assertThat(codes(ack)).containsExactly(0, 1, 2);
        }
    }

    @Test
    void aclDeniedFilterGets0x80InV311And0x87InV5AndTheSessionContinues() {
        try (WireClient v3 = broker.client(MqttVersion.MQTT_3_1_1); WireClient v5 = broker.client(MqttVersion.MQTT_5)) {
            v3.connect("b3", true, "bob", TestBroker.PASSWORD, MqttProperties.NO_PROPERTIES);
            v3.send(MqttMessageBuilders.subscribe().messageId(1).addSubscription(MqttQoS.AT_LEAST_ONCE, "#")
                    .addSubscription(MqttQoS.AT_LEAST_ONCE, "bob/+").build());
            assertThat(codes(v3.expect(MqttMessageType.SUBACK))).containsExactly(0x80, 1);
            v5.connect("b5", true, "bob", TestBroker.PASSWORD, MqttProperties.NO_PROPERTIES);
            v5.subscribe(2, "alice/#", 1);
            assertThat(codes(v5.expect(MqttMessageType.SUBACK))).containsExactly(0x87);
            assertThat(v5.isOpen()).isTrue();
            v5.subscribe(3, "bob/secret", 1);
            assertThat(codes(v5.expect(MqttMessageType.SUBACK))).as("deny rule").containsExactly(0x87);
        }
    }

    @Test
    void aWideSubscriptionDoesNotReadAroundADenyRule() {
        try (WireClient bob = broker.client(MqttVersion.MQTT_5); WireClient alice = connected("a", MqttVersion.MQTT_5)) {
            bob.connect("b", true, "bob", TestBroker.PASSWORD, MqttProperties.NO_PROPERTIES);
            bob.subscribe(1, "bob/#", 0);
            bob.expect(MqttMessageType.SUBACK);
            alice.publish("bob/secret", 0, "hidden", 0);
            alice.publish("bob/public", 0, "shown", 0);
            assertThat(text(bob.expect(MqttMessageType.PUBLISH))).isEqualTo("shown");
            bob.expectNothing();
        }
    }

    @Test
    void invalidFilterIsRefusedAlone() {
        try (WireClient c = connected("s", MqttVersion.MQTT_5)) {
            c.send(MqttMessageBuilders.subscribe().messageId(1).addSubscription(MqttQoS.AT_MOST_ONCE, "a/#/b")
                    .addSubscription(MqttQoS.AT_MOST_ONCE, "ok").addSubscription(MqttQoS.AT_MOST_ONCE, "x+").build());
            assertThat(codes(c.expect(MqttMessageType.SUBACK))).containsExactly(0x8F, 0, 0x8F);
        }
    }

    @Test
    void subscriptionLimitIsQuotaExceeded() {
        try (TestBroker small = new TestBroker(Map.of("tbmq.mqtt.max-subscriptions-per-client", "2"));
                WireClient c = small.client(MqttVersion.MQTT_5)) {
            c.connectAccepted("s", true);
            c.send(MqttMessageBuilders.subscribe().messageId(1).addSubscription(MqttQoS.AT_MOST_ONCE, "a")
                    .addSubscription(MqttQoS.AT_MOST_ONCE, "b").addSubscription(MqttQoS.AT_MOST_ONCE, "c").build());
            assertThat(codes(c.expect(MqttMessageType.SUBACK))).containsExactly(0, 0, 0x97);
        }
    }

    @Test
    void deliveryQosIsTheLowerOfPublishedAndGranted() {
        try (WireClient sub = connected("s", MqttVersion.MQTT_5); WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            sub.subscribe(1, "q/#", 1);
            sub.expect(MqttMessageType.SUBACK);
            pub.publish("q/2", 2, "x", 1);
            pub.publish("q/0", 0, "y", 0);
            List<MqttMessage> got = sub.receiveAll();
            assertThat(got).extracting(m -> m.fixedHeader().qosLevel().value()).containsExactly(1, 0);
        }
    }

    @Test
    void overlappingSubscriptionsDeliverOneCopyAtTheHighestQosWithAllIdentifiers() {
        // [MQTT-3.3.4-2], [MQTT-3.3.4-3]
        try (WireClient sub = connected("s", MqttVersion.MQTT_5); WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            sub.subscribe(1, "o/+", option(0, false, false, RetainedHandlingPolicy.SEND_AT_SUBSCRIBE), subscriptionId(11));
            sub.subscribe(2, "o/#", option(2, false, false, RetainedHandlingPolicy.SEND_AT_SUBSCRIBE), subscriptionId(22));
            sub.receiveAll();
            pub.publish("o/x", 2, "once", 1);
            List<MqttMessage> got = sub.receiveAll();
            assertThat(got).hasSize(1);
            MqttPublishMessage m = (MqttPublishMessage) got.get(0);
            assertThat(m.fixedHeader().qosLevel().value()).isEqualTo(2);
            assertThat(m.variableHeader().properties().getProperties(MqttPropertyType.SUBSCRIPTION_IDENTIFIER.value()))
                    .extracting(p -> (Integer) p.value()).containsExactlyInAnyOrder(11, 22);
        }
    }

    @Test
    void noLocalSuppressesTheClientsOwnMessages() {
        try (WireClient c = connected("self", MqttVersion.MQTT_5)) {
            c.subscribe(1, "echo", option(0, true, false, RetainedHandlingPolicy.SEND_AT_SUBSCRIBE), MqttProperties.NO_PROPERTIES);
            c.expect(MqttMessageType.SUBACK);
            c.publish("echo", 0, "mine", 0);
            c.expectNothing();
        }
    }

    @Test
    void retainHandlingAndRetainAsPublished() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5); WireClient sub = connected("s", MqttVersion.MQTT_5)) {
            pub.publish("r/a", 1, true, "kept", 1, MqttProperties.NO_PROPERTIES);
            pub.expect(MqttMessageType.PUBACK);

            sub.subscribe(1, "r/#", option(1, false, false, RetainedHandlingPolicy.SEND_AT_SUBSCRIBE), MqttProperties.NO_PROPERTIES);
            sub.expect(MqttMessageType.SUBACK);
            MqttPublishMessage retained = sub.expect(MqttMessageType.PUBLISH);
            assertThat(retained.fixedHeader().isRetain()).as("sent for a new subscription [MQTT-3.3.1-9]").isTrue();
            sub.ack(MqttMessageType.PUBACK, retained.variableHeader().packetId());

            sub.subscribe(2, "r/#", option(1, false, false, RetainedHandlingPolicy.SEND_AT_SUBSCRIBE_IF_NOT_YET_EXISTS),
                    MqttProperties.NO_PROPERTIES);
            sub.expect(MqttMessageType.SUBACK);
            sub.expectNothing();

            sub.subscribe(3, "r/+", option(1, false, true, RetainedHandlingPolicy.DONT_SEND_AT_SUBSCRIBE), MqttProperties.NO_PROPERTIES);
            sub.expect(MqttMessageType.SUBACK);
            sub.expectNothing();

            pub.publish("r/a", 1, true, "live", 2, MqttProperties.NO_PROPERTIES);
            MqttPublishMessage live = sub.expect(MqttMessageType.PUBLISH);
            assertThat(live.fixedHeader().isRetain()).as("Retain As Published on one matching subscription").isTrue();
        }
    }

    @Test
    void v311ForwardingClearsTheRetainFlag() {
        // [MQTT-3.3.1-9] (3.1.1): established subscriptions get RETAIN 0
        try (WireClient pub = connected("p", MqttVersion.MQTT_3_1_1); WireClient sub = connected("s", MqttVersion.MQTT_3_1_1)) {
            sub.subscribe(1, "f/#", 0);
            sub.expect(MqttMessageType.SUBACK);
            pub.publish("f/x", 0, true, "r", 0, MqttProperties.NO_PROPERTIES);
            assertThat(sub.<MqttPublishMessage>expect(MqttMessageType.PUBLISH).fixedHeader().isRetain()).isFalse();
        }
    }

    @Test
    void sharedSubscriptionRoundRobinsAndGetsNoRetained() {
        try (WireClient pub = connected("p", MqttVersion.MQTT_5); WireClient m1 = connected("m1", MqttVersion.MQTT_5);
                WireClient m2 = connected("m2", MqttVersion.MQTT_5)) {
            pub.publish("jobs/old", 0, true, "retained", 0, MqttProperties.NO_PROPERTIES);
            m1.subscribe(1, "$share/workers/jobs/#", 0);
            m2.subscribe(1, "$share/workers/jobs/#", 0);
            m1.expect(MqttMessageType.SUBACK);
            m2.expect(MqttMessageType.SUBACK);
            m1.expectNothing();
            for (int i = 0; i < 6; i++) {
                pub.publish("jobs/" + i, 0, "j" + i, 0);
            }
            assertThat(m1.receiveAll()).hasSize(3);
            assertThat(m2.receiveAll()).hasSize(3);
        }
    }

    @Test
    void noLocalOnASharedSubscriptionIsAProtocolError() {
        try (WireClient c = connected("s", MqttVersion.MQTT_5)) {
            c.subscribe(1, "$share/g/t", option(0, true, false, RetainedHandlingPolicy.SEND_AT_SUBSCRIBE), MqttProperties.NO_PROPERTIES);
            assertThat(WireClient.reasonCode(c.expect(MqttMessageType.DISCONNECT))).isEqualTo(0x82);
        }
    }

    @Test
    void wildcardsDoNotMatchDollarTopics() {
        try (WireClient sub = connected("s", MqttVersion.MQTT_5); WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            sub.subscribe(1, "#", 0);
            sub.expect(MqttMessageType.SUBACK);
            pub.publish("$internal/x", 0, "hidden", 0);
            sub.expectNothing();
            sub.subscribe(2, "$internal/#", 0);
            sub.expect(MqttMessageType.SUBACK);
            pub.publish("$internal/x", 0, "named", 0);
            assertThat(text(sub.expect(MqttMessageType.PUBLISH))).isEqualTo("named");
        }
    }

    @Test
    void expiredMessagesAreNotDeliveredAndRemainingExpiryIsSent() throws InterruptedException {
        try (WireClient sub = broker.client(MqttVersion.MQTT_5); WireClient pub = connected("p", MqttVersion.MQTT_5)) {
            MqttProperties persist = new MqttProperties();
            persist.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), 300));
            sub.connect("s", true, "alice", TestBroker.PASSWORD, persist);
            sub.subscribe(1, "e/#", 1);
            sub.expect(MqttMessageType.SUBACK);
            sub.drop();
            pub.publish("e/short", 1, false, "gone", 1, expiry(1));
            pub.publish("e/long", 1, false, "kept", 2, expiry(100));
            Thread.sleep(1_200);
            try (WireClient again = broker.client(MqttVersion.MQTT_5)) {
                again.connect("s", false, "alice", TestBroker.PASSWORD, persist);
                MqttPublishMessage m = again.expect(MqttMessageType.PUBLISH);
                assertThat(text(m)).isEqualTo("kept");
                int remaining = (Integer) m.variableHeader().properties()
                        .getProperty(MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL.value()).value();
                assertThat(remaining).isBetween(95, 100);
                again.expectNothing();
            }
        }
    }

    private static MqttProperties subscriptionId(int id) {
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.IntegerProperty(MqttPropertyType.SUBSCRIPTION_IDENTIFIER.value(), id));
        return p;
    }

    private static MqttProperties expiry(int seconds) {
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.IntegerProperty(MqttPropertyType.PUBLICATION_EXPIRY_INTERVAL.value(), seconds));
        return p;
    }
}
