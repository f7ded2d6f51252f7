package io.tbmq.broker.protocol;

import static io.tbmq.broker.testing.WireClient.reasonCode;
import static io.tbmq.broker.testing.WireClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** DISCONNECT from the client (§3.14) and the Will it keeps or discards (§3.1.2.5). */
class DisconnectHandlerTest {
    private final TestBroker broker = new TestBroker();

    @AfterEach
    void close() {
        broker.close();
    }

    private WireClient willWatcher() {
        WireClient w = broker.client(MqttVersion.MQTT_5);
        w.connectAccepted("watcher", true);
        w.subscribe(1, "wills/#", 0);
        w.expect(MqttMessageType.SUBACK);
        return w;
    }

    private WireClient withWill(String id, int delaySeconds, long sessionExpiry) {
        WireClient c = broker.client(MqttVersion.MQTT_5);
        MqttProperties willProps = new MqttProperties();
        if (delaySeconds > 0) {
            willProps.add(new MqttProperties.IntegerProperty(MqttPropertyType.WILL_DELAY_INTERVAL.value(), delaySeconds));
        }
        MqttProperties props = new MqttProperties();
        if (sessionExpiry > 0) {
            props.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), (int) sessionExpiry));
        }
        c.send(MqttMessageBuilders.connect().protocolVersion(MqttVersion.MQTT_5).clientId(id).cleanSession(true)
                .keepAlive(60).hasUser(true).username("alice").hasPassword(true)
                .password(TestBroker.PASSWORD.getBytes(StandardCharsets.UTF_8)).willFlag(true).willQoS(MqttQoS.AT_MOST_ONCE)
                .willTopic("wills/" + id).willMessage(("bye " + id).getBytes(StandardCharsets.UTF_8))
                .willProperties(willProps).properties(props).build());
        c.expect(MqttMessageType.CONNACK);
        return c;
    }

    @Test
    void normalDisconnectDiscardsTheWill() {
        // [MQTT-3.14.4-3]
        try (WireClient watcher = willWatcher(); WireClient c = withWill("polite", 0, 0)) {
            c.disconnect(0x00);
            assertThat(c.isOpen()).isFalse();
            watcher.expectNothing();
        }
    }

    @Test
    void disconnectWithWillMessagePublishesIt() {
        try (WireClient watcher = willWatcher(); WireClient c = withWill("leaving", 0, 0)) {
            c.disconnect(0x04);
            assertThat(text(watcher.expect(MqttMessageType.PUBLISH))).isEqualTo("bye leaving");
        }
    }

    @Test
    void disconnectWithAnErrorCodePublishesTheWillSinceOnlyANormalOneDeletesIt() {
        // [MQTT-3.1.2-8]: deleted only on DISCONNECT 0x00; 0x80 is a client ending abnormally.
        try (WireClient watcher = willWatcher(); WireClient c = withWill("failing", 0, 0)) {
            c.disconnect(0x80);
            assertThat(text(watcher.expect(MqttMessageType.PUBLISH))).isEqualTo("bye failing");
        }
    }

    @Test
    void networkLossPublishesTheWill() {
        try (WireClient watcher = willWatcher(); WireClient c = withWill("crashed", 0, 0)) {
            c.drop();
            MqttPublishMessage will = watcher.expect(MqttMessageType.PUBLISH);
            assertThat(will.variableHeader().topicName()).isEqualTo("wills/crashed");
        }
    }

    @Test
    void willDelayWaitsAndAReconnectCancelsIt() {
        try (WireClient watcher = willWatcher()) {
            WireClient c = withWill("flaky", 1, 60);
            c.drop();
            watcher.expectNothing();
            try (WireClient back = broker.client(MqttVersion.MQTT_5)) {
                MqttProperties keep = new MqttProperties();
                keep.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), 60));
                back.connect("flaky", false, "alice", TestBroker.PASSWORD, keep);
                Awaitility.await().during(1_500, TimeUnit.MILLISECONDS).atMost(3, TimeUnit.SECONDS)
                        .until(() -> watcher.receive() == null);
            }
            c.close();
        }
    }

    @Test
    void delayedWillIsPublishedWhenTheDelayPasses() {
        try (WireClient watcher = willWatcher(); WireClient c = withWill("gone", 1, 60)) {
            c.drop();
            watcher.expectNothing();
            Awaitility.await().atMost(4, TimeUnit.SECONDS).until(() -> {
                MqttMessage m = watcher.receive();
                return m != null && m.fixedHeader().messageType() == MqttMessageType.PUBLISH;
            });
        }
    }

    @Test
    void settingSessionExpiryFromZeroAtDisconnectIsAProtocolError() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            c.connectAccepted("z", true);
            MqttProperties p = new MqttProperties();
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), 30));
            c.send(new MqttMessage(new MqttFixedHeader(MqttMessageType.DISCONNECT, false, MqttQoS.AT_MOST_ONCE, false, 0),
                    new MqttReasonCodeAndPropertiesVariableHeader((byte) 0, p)));
            assertThat(reasonCode(c.expect(MqttMessageType.DISCONNECT))).isEqualTo(0x82);
        }
    }

    @Test
    void sessionExpiryZeroAtDisconnectEndsAPersistentSession() {
        try (WireClient c = broker.client(MqttVersion.MQTT_5)) {
            MqttProperties keep = new MqttProperties();
            keep.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), 60));
            c.connect("short", true, "alice", TestBroker.PASSWORD, keep);
            MqttProperties zero = new MqttProperties();
            zero.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), 0));
            c.send(new MqttMessage(new MqttFixedHeader(MqttMessageType.DISCONNECT, false, MqttQoS.AT_MOST_ONCE, false, 0),
                    new MqttReasonCodeAndPropertiesVariableHeader((byte) 0, zero)));
            assertThat(broker.core().services().sessions().get("short")).isNull();
        }
    }
}
