package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5SubAckException;
import com.hivemq.client.mqtt.mqtt5.message.subscribe.Mqtt5RetainHandling;
import com.hivemq.client.mqtt.mqtt5.message.subscribe.suback.Mqtt5SubAck;
import com.hivemq.client.mqtt.mqtt5.message.subscribe.suback.Mqtt5SubAckReasonCode;

import io.tbmq.localstack.BrokerNode;

/** MQTT 5 §3.8/§3.9 SUBSCRIBE options, shared subscriptions and ACL refusals end to end. */
class Mqtt5SubscribeIT {
    private final BrokerNode broker = ItStack.get().broker();

    @Test
    void noLocalAndRetainHandling() throws Exception {
        Mqtt5BlockingClient c = Clients.alice5(broker, "s-options");
        c.publishWith().topic("subscribe/opts/r").retain(true).payload("old".getBytes()).qos(MqttQos.AT_LEAST_ONCE).send();
        try (var publishes = c.publishes(MqttGlobalPublishFilter.ALL)) {
            c.subscribeWith().topicFilter("subscribe/opts/#").noLocal(true).retainHandling(Mqtt5RetainHandling.DO_NOT_SEND)
                    .qos(MqttQos.AT_LEAST_ONCE).send();
            assertThat(publishes.receive(1, TimeUnit.SECONDS)).as("Retain Handling 2 sends nothing").isEmpty();
            c.publishWith().topic("subscribe/opts/x").payload("own".getBytes()).send();
            assertThat(publishes.receive(1, TimeUnit.SECONDS)).as("No Local").isEmpty();
        } finally {
            c.publishWith().topic("subscribe/opts/r").retain(true).payload(new byte[0]).send();
            c.disconnect();
        }
    }

    @Test
    void sharedSubscriptionSplitsTheLoadAcrossMembers() throws Exception {
        Mqtt5BlockingClient m1 = Clients.alice5(broker, "s-share-1");
        Mqtt5BlockingClient m2 = Clients.alice5(broker, "s-share-2");
        Mqtt5BlockingClient pub = Clients.alice5(broker, "s-share-pub");
        try (var p1 = m1.publishes(MqttGlobalPublishFilter.ALL); var p2 = m2.publishes(MqttGlobalPublishFilter.ALL)) {
            m1.subscribeWith().topicFilter("$share/workers/subscribe/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
            m2.subscribeWith().topicFilter("$share/workers/subscribe/jobs/#").qos(MqttQos.AT_LEAST_ONCE).send();
            for (int i = 0; i < 20; i++) {
                pub.publishWith().topic("subscribe/jobs/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(("j" + i).getBytes()).send();
            }
            int a = 0;
            int b = 0;
            while (p1.receive(1, TimeUnit.SECONDS).isPresent()) {
                a++;
            }
            while (p2.receive(1, TimeUnit.SECONDS).isPresent()) {
                b++;
            }
            assertThat(a + b).isEqualTo(20);
            assertThat(a).isEqualTo(10);
        } finally {
            m1.disconnect();
            m2.disconnect();
            pub.disconnect();
        }
    }

    @Test
    void aclRefusesFiltersOutsideTheUsersRightsWith0x87() {
        Mqtt5BlockingClient bob = Clients.v5(broker, "s-bob").buildBlocking();
        bob.connectWith().simpleAuth().username("bob").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .applySimpleAuth().send();
        Mqtt5SubAck ack;
        try {
            ack = bob.subscribeWith().addSubscription().topicFilter("#").applySubscription()
                    .addSubscription().topicFilter("bob/inbox").applySubscription()
                    .addSubscription().topicFilter("devices/s-bob/in").applySubscription()
                    .addSubscription().topicFilter("devices/other/in").applySubscription().send();
        } catch (Mqtt5SubAckException e) {
            ack = e.getMqttMessage();
        }
        assertThat(ack.getReasonCodes()).containsExactly(Mqtt5SubAckReasonCode.NOT_AUTHORIZED,
                Mqtt5SubAckReasonCode.GRANTED_QOS_2, Mqtt5SubAckReasonCode.GRANTED_QOS_2, Mqtt5SubAckReasonCode.NOT_AUTHORIZED);
        assertThat(bob.getState().isConnected()).isTrue();
        bob.disconnect();
    }
}
