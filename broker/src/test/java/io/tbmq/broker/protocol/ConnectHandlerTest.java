package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.reasonCode;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.persistence.SessionStores;
import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionStore;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** CONNECT handling (§3.1, §3.2) through the broker's real pipeline. */
class ConnectHandlerTest {
    private TestBroker broker = new TestBroker();

    @AfterEach
    void close() {
        broker.close();
    }

    private static MqttProperties props(MqttPropertyType type, int value) {
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.IntegerProperty(type.value(), value));
        return p;
    }

    private static Object property(MqttConnAckMessage ack, MqttPropertyType type) {
        MqttProperties.MqttProperty<?> p = ack.variableHeader().properties().getProperty(type.value());
        return p == null ? null : p.value();
    }

    @Test
    void acceptsValidCredentialsAndAdvertisesLimits() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = c.connect("dev-1", true);
            assertThat(reasonCode(ack)).isZero();
            assertThat(ack.variableHeader().isSessionPresent()).isFalse();
            assertThat(property(ack, MqttPropertyType.MAXIMUM_PACKET_SIZE)).isEqualTo(262144);
            assertThat(property(ack, MqttPropertyType.RECEIVE_MAXIMUM)).isEqualTo(256);
            assertThat(property(ack, MqttPropertyType.TOPIC_ALIAS_MAXIMUM)).isEqualTo(64);
        }
    }

    @Test
    void wrongPasswordIsRefusedWith0x86InV5And0x04InV3() {
        try (WireClient v5 = broker.client(MqttVersion.MQTT_5); WireClient v3 = broker.client(MqttVersion.MQTT_3_1_1)) {
            assertThat(reasonCode(v5.connect("x", true, "alice", "wrong", MqttProperties.NO_PROPERTIES))).isEqualTo(0x86);
            assertThat(v5.isOpen()).isFalse();
            assertThat(reasonCode(v3.connect("y", true, "nobody", "secret", MqttProperties.NO_PROPERTIES))).isEqualTo(0x04);
            assertThat(v3.isOpen()).isFalse();
        }
    }

    @Test
    void anonymousIsRefusedUnlessConfigured() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            assertThat(reasonCode(c.connect("anon", true, null, null, MqttProperties.NO_PROPERTIES))).isEqualTo(0x87);
        }
        try (TestBroker open = TestBroker.anonymous(); WireClient c = open.client(MqttVersion.MQTT_3_1_1)) {
            assertThat(reasonCode(c.connect("anon", true, null, null, MqttProperties.NO_PROPERTIES))).isZero();
        }
    }

    @Test
    void emptyClientIdGetsAnAssignedIdInV5() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = c.connect("", true);
            assertThat(reasonCode(ack)).isZero();
            assertThat((String) property(ack, MqttPropertyType.ASSIGNED_CLIENT_IDENTIFIER)).startsWith("auto-");
        }
    }

    @Test
    void emptyClientIdWithoutCleanSessionIsRejectedInV311() {
        // [MQTT-3.1.3-8]
        try (WireClient c = broker.client(MqttVersion.MQTT_3_1_1)) {
            assertThat(reasonCode(c.connect("", false))).isEqualTo(0x02);
            assertThat(c.isOpen()).isFalse();
        }
    }

    @Test
    void tooLongClientIdIsRejected() {
        try (TestBroker small = new TestBroker(Map.of("tbmq.mqtt.max-client-id-length", "30"));
                WireClient c = small.client(MqttVersion.MQTT_5)) {
            assertThat(reasonCode(c.connect("x".repeat(31), true))).isEqualTo(0x85);
        }
    }

    @Test
    void sessionPresentOnlyWhenAPersistentSessionExists() {
        MqttProperties expiry = props(MqttPropertyType.SESSION_EXPIRY_INTERVAL, 300);
        try (WireClient first = broker.client(MqttVersion.MQTT_5)) {
            first.connect("keep", true, "alice", "secret", expiry);
            first.disconnect(0);
        }
        try (WireClient second = broker.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = second.connect("keep", false, "alice", "secret", expiry);
            assertThat(ack.variableHeader().isSessionPresent()).isTrue();
        }
        try (WireClient third = broker.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = third.connect("keep", true, "alice", "secret", expiry);
            assertThat(ack.variableHeader().isSessionPresent()).as("clean start discards it [MQTT-3.1.2-4]").isFalse();
        }
    }

    @Test
    void sessionExpiryAboveTheMaximumIsCappedAndReported() {
        try (TestBroker capped = new TestBroker(Map.of("tbmq.mqtt.max-session-expiry-interval", "100"));
                WireClient c = capped.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = c.connect("cap", true, "alice", "secret", props(MqttPropertyType.SESSION_EXPIRY_INTERVAL, 5000));
            assertThat(property(ack, MqttPropertyType.SESSION_EXPIRY_INTERVAL)).isEqualTo(100);
        }
    }

    @Test
    void keepAliveAboveTheMaximumGetsServerKeepAlive() {
        try (TestBroker capped = new TestBroker(Map.of("tbmq.mqtt.max-keep-alive", "30"));
                WireClient c = capped.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = c.connect("ka", true);
            assertThat(property(ack, MqttPropertyType.SERVER_KEEP_ALIVE)).isEqualTo(30);
        }
    }

    @Test
    void silenceForOneAndAHalfKeepAlivesEndsTheConnection() throws InterruptedException {
        // [MQTT-3.1.2-24]; Netty's idle detection reads the real clock, so this waits 1.5 s for real
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            c.keepAlive(1);
            c.connectAccepted("quiet", true);
            Thread.sleep(1_000);
            c.sendHex("c0 00");
            c.expect(MqttMessageType.PINGRESP);
            Thread.sleep(1_000);
            assertThat(c.isOpen()).as("a PINGREQ resets the timer").isTrue();
            Thread.sleep(700);
            MqttMessage disconnect = c.expect(MqttMessageType.DISCONNECT);
            assertThat(reasonCode(disconnect)).isEqualTo(0x8D);
            assertThat(c.isOpen()).isFalse();
        }
    }

    @Test
    void noConnectWithinTheTimeoutClosesTheConnection() {
        try (WireClient c = broker.client(MqttVersion.MQTT_3_1_1)) {
            c.sendHex("10 0c 00 04 4d 51"); // half a CONNECT, trickled
            c.advanceTime(11, TimeUnit.SECONDS);
            assertThat(c.isOpen()).isFalse();
        }
    }

    @Test
    void takeoverDisconnectsTheOldConnectionWith0x8E() {
        try (WireClient old = broker.client(MqttVersion.MQTT_5); WireClient fresh = broker.client(MqttVersion.MQTT_5)) {
            old.connectAccepted("same", true);
            fresh.connectAccepted("same", false);
            MqttMessage disconnect = old.expect(MqttMessageType.DISCONNECT);
            assertThat(reasonCode(disconnect)).isEqualTo(0x8E);
            assertThat(old.isOpen()).isFalse();
            assertThat(fresh.isOpen()).isTrue();
        }
    }

    @Test
    void authenticationMethodIsRefusedWith0x8C() {
        MqttProperties p = new MqttProperties();
        p.add(new MqttProperties.StringProperty(MqttPropertyType.AUTHENTICATION_METHOD.value(), "SCRAM-SHA-1"));
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            assertThat(reasonCode(c.connect("scram", true, "alice", "secret", p))).isEqualTo(0x8C);
        }
    }

    @Test
    void requestedResponseInformationIsReturned() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            MqttConnAckMessage ack = c.connect("rr", true, "alice", "secret", props(MqttPropertyType.REQUEST_RESPONSE_INFORMATION, 1));
            assertThat(property(ack, MqttPropertyType.RESPONSE_INFORMATION)).isEqualTo("response/rr");
        }
    }

    @Test
    void packetsPipelinedBehindConnectAreProcessedAfterConnack() {
        try (WireClient c = broker.client(MqttVersion.MQTT_3_1_1)) {
            // CONNECT alice/secret + PINGREQ in one write
            c.sendHex("10 1c 00 04 4d 51 54 54 04 c2 00 3c 00 01 70 00 05 61 6c 69 63 65 00 06 73 65 63 72 65 74 c0 00");
            c.expect(MqttMessageType.CONNACK);
            c.expect(MqttMessageType.PINGRESP);
        }
    }

    /** A DEVICE session store that never gets ready, as Redis did not for a few clients in run 59. */
    private static final class StalledStore implements SessionStore {
        @Override
        public CompletableFuture<Void> prepare(Session session) {
            return new CompletableFuture<>();
        }

        @Override
        public boolean attach(Session session, DeliverySink target) {
            return true;
        }

        @Override
        public void detach(Session session, DeliverySink target) {
        }

        @Override
        public void acknowledged(Session session, int packetId, long score) {
        }

        @Override
        public void released(Session session, int packetId, long score) {
        }

        @Override
        public boolean fillsGaps() {
            return false;
        }

        @Override
        public void missed(Session session) {
        }

        @Override
        public void recheck(Session session) {
        }

        @Override
        public CompletableFuture<Void> ended(Session session) {
            return CompletableFuture.completedFuture(null);
        }
    }

    private static void sendPersistentConnect(WireClient c, MqttVersion version, String clientId) {
        c.send(MqttMessageBuilders.connect().protocolVersion(version).clientId(clientId).cleanSession(false).keepAlive(30)
                .hasUser(true).username("alice").hasPassword(true).password(TestBroker.PASSWORD.getBytes())
                .willFlag(true).willQoS(io.netty.handler.codec.mqtt.MqttQoS.AT_MOST_ONCE).willTopic("wills/" + clientId)
                .willMessage("bye".getBytes())
                .properties(version == MqttVersion.MQTT_5 ? props(MqttPropertyType.SESSION_EXPIRY_INTERVAL, 3600)
                        : MqttProperties.NO_PROPERTIES)
                .build());
    }

    @Test
    void aConnectStillWaitingForItsSessionStoreAtTheConnectTimeoutIsToldTheServerIsUnavailable() {
        try (TestBroker b = new TestBroker(Map.of(), new SessionStores(new StalledStore(), null, () -> false));
                WireClient v5 = b.client(MqttVersion.MQTT_5); WireClient v3 = b.client(MqttVersion.MQTT_3_1_1)) {
            sendPersistentConnect(v5, MqttVersion.MQTT_5, "stalled-5");
            sendPersistentConnect(v3, MqttVersion.MQTT_3_1_1, "stalled-3");
            v5.expectNothing();
            v3.expectNothing();
            long timeout = b.config().mqtt().connectTimeout().toMillis();
            v5.advanceTime(timeout + 1, TimeUnit.MILLISECONDS);
            v3.advanceTime(timeout + 1, TimeUnit.MILLISECONDS);

            MqttConnAckMessage ack5 = v5.expect(MqttMessageType.CONNACK);
            assertThat(reasonCode(ack5)).as("Server unavailable").isEqualTo(0x88);
            assertThat((String) property(ack5, MqttPropertyType.REASON_STRING)).contains("the session store");
            assertThat(reasonCode(v3.expect(MqttMessageType.CONNACK))).as("v3: server unavailable").isEqualTo(0x03);
            assertThat(b.registry().get("tbmq.connections.connect.timeouts").tag("waiting", "session-store").counter().count())
                    .isEqualTo(2.0);

            v5.advanceTime(3, TimeUnit.SECONDS);
            v3.advanceTime(3, TimeUnit.SECONDS);
            assertThat(v5.isOpen()).isFalse();
            assertThat(v3.isOpen()).isFalse();
            v5.expectNothing();
            assertThat(b.log().appended()).as("a refused client never connected: no Will").noneMatch(m -> m.topic().startsWith("wills/"));
        }
    }

    @Test
    void aConnectionThatNeverSendsConnectIsClosedAndCounted() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            c.advanceTime(broker.config().mqtt().connectTimeout().toMillis() + 1, TimeUnit.MILLISECONDS);
            assertThat(c.isOpen()).isFalse();
            c.expectNothing();
            assertThat(broker.registry().get("tbmq.connections.connect.timeouts").tag("waiting", "connect").counter().count())
                    .isEqualTo(1.0);
        }
    }
}
