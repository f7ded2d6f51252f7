package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;

import io.tbmq.localstack.BrokerNode;

/** MQTT 5 §3.1/§3.2 CONNECT and CONNACK against the real broker. */
class Mqtt5ConnectIT {
    private final BrokerNode broker = ItStack.get().broker();

    private Mqtt5ConnAck connect(Mqtt5BlockingClient c, boolean cleanStart, long expiry) {
        return c.connectWith().cleanStart(cleanStart).sessionExpiryInterval(expiry).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
    }

    @Test
    void badCredentialsAreRefusedWith0x86() {
        Mqtt5BlockingClient c = Clients.v5(broker, "bad-auth").buildBlocking();
        assertThatThrownBy(() -> c.connectWith().simpleAuth().username("alice").password("nope".getBytes()).applySimpleAuth().send())
                .isInstanceOfSatisfying(Mqtt5ConnAckException.class, e -> assertThat(e.getMqttMessage().getReasonCode())
                        .isEqualTo(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD));
        assertThatThrownBy(() -> c.connect()).isInstanceOfSatisfying(Mqtt5ConnAckException.class,
                e -> assertThat(e.getMqttMessage().getReasonCode()).isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED));
    }

    @Test
    void emptyClientIdGetsAnAssignedIdentifier() {
        Mqtt5BlockingClient c = Clients.v5(broker, "").buildBlocking();
        Mqtt5ConnAck ack = connect(c, true, 0);
        assertThat(ack.getAssignedClientIdentifier()).isPresent();
        assertThat(ack.getAssignedClientIdentifier().get().toString()).startsWith("auto-");
        c.disconnect();
    }

    @Test
    void persistentSessionIsResumedAndItsQueueDeliveredThenExpires() throws Exception {
        Mqtt5BlockingClient sub = Clients.v5(broker, "c-persist").buildBlocking();
        assertThat(connect(sub, true, 2).isSessionPresent()).isFalse();
        sub.subscribeWith().topicFilter("connect/persist").qos(MqttQos.AT_LEAST_ONCE).send();
        sub.disconnect();

        Mqtt5BlockingClient pub = Clients.alice5(broker, "c-persist-pub");
        pub.publishWith().topic("connect/persist").qos(MqttQos.AT_LEAST_ONCE).payload("queued".getBytes()).send();

        Mqtt5BlockingClient back = Clients.v5(broker, "c-persist").buildBlocking();
        try (var publishes = back.publishes(MqttGlobalPublishFilter.ALL)) {
            assertThat(connect(back, false, 2).isSessionPresent()).isTrue();
            assertThat(publishes.receive(10, TimeUnit.SECONDS)).get()
                    .satisfies(p -> assertThat(Clients.text(p.getPayloadAsBytes())).isEqualTo("queued"));
        }
        back.disconnect();
        Thread.sleep(3_000);
        Mqtt5BlockingClient later = Clients.v5(broker, "c-persist").buildBlocking();
        assertThat(connect(later, false, 2).isSessionPresent()).as("expired after 2 s [MQTT-3.1.2-23]").isFalse();
        later.disconnect();
        pub.disconnect();
    }

    @Test
    void aSecondConnectionWithTheSameIdTakesTheSessionOverWith0x8E() throws Exception {
        CompletableFuture<Throwable> cause = new CompletableFuture<>();
        Mqtt5BlockingClient first = Clients.v5(broker, "c-takeover")
                .addDisconnectedListener(ctx -> cause.complete(ctx.getCause())).buildBlocking();
        connect(first, true, 60);
        Mqtt5BlockingClient second = Clients.v5(broker, "c-takeover").buildBlocking();
        assertThat(connect(second, false, 60).isSessionPresent()).isTrue();
        Throwable reason = cause.get(10, TimeUnit.SECONDS);
        assertThat(reason).isInstanceOfSatisfying(Mqtt5DisconnectException.class, e -> assertThat(
                e.getMqttMessage().getReasonCode()).isEqualTo(Mqtt5DisconnectReasonCode.SESSION_TAKEN_OVER));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> !first.getState().isConnected());
        assertThat(second.getState().isConnected()).isTrue();
        second.disconnect();
    }

    @Test
    void connackAdvertisesTheBrokersLimits() {
        Mqtt5BlockingClient c = Clients.v5(broker, "c-limits").buildBlocking();
        Mqtt5ConnAck ack = connect(c, true, 0);
        assertThat(ack.getRestrictions().getMaximumPacketSize()).isEqualTo(262144);
        assertThat(ack.getRestrictions().getReceiveMaximum()).isEqualTo(256);
        assertThat(ack.getRestrictions().getTopicAliasMaximum()).isEqualTo(64);
        assertThat(ack.getRestrictions().isSharedSubscriptionAvailable()).isTrue();
        c.disconnect();
    }
}
