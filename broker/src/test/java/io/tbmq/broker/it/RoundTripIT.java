package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;

import io.tbmq.localstack.BrokerNode;

/**
 * End to end through Kafka with three independent client implementations: HiveMQ (v3 and v5),
 * Eclipse Paho v3 and Paho v5, at every QoS.
 */
class RoundTripIT {
    private final BrokerNode broker = ItStack.get().broker();

    @ParameterizedTest(name = "HiveMQ v5 QoS {0}")
    @ValueSource(ints = {0, 1, 2})
    void hivemqV5(int qos) throws InterruptedException {
        Mqtt5BlockingClient sub = Clients.alice5(broker, "h5-sub-" + qos);
        Mqtt5BlockingClient pub = Clients.alice5(broker, "h5-pub-" + qos);
        try (Mqtt5BlockingClient.Mqtt5Publishes publishes = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("rt/h5/" + qos + "/#").qos(MqttQos.fromCode(qos)).send();
            for (int i = 0; i < 20; i++) {
                pub.publishWith().topic("rt/h5/" + qos + "/t").qos(MqttQos.fromCode(qos)).payload(("m" + i).getBytes()).send();
            }
            for (int i = 0; i < 20; i++) {
                Optional<Mqtt5Publish> m = publishes.receive(10, TimeUnit.SECONDS);
                assertThat(m).as("message %d", i).isPresent();
                assertThat(Clients.text(m.get().getPayloadAsBytes())).as("in order").isEqualTo("m" + i);
                assertThat(m.get().getQos().getCode()).isEqualTo(qos);
            }
        } finally {
            sub.disconnect();
            pub.disconnect();
        }
    }

    @ParameterizedTest(name = "HiveMQ v3.1.1 QoS {0}")
    @ValueSource(ints = {0, 1, 2})
    void hivemqV3(int qos) throws InterruptedException {
        Mqtt3BlockingClient sub = Clients.alice3(broker, "h3-sub-" + qos);
        Mqtt3BlockingClient pub = Clients.alice3(broker, "h3-pub-" + qos);
        try (var publishes = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("rt/h3/" + qos).qos(MqttQos.fromCode(qos)).send();
            pub.publishWith().topic("rt/h3/" + qos).qos(MqttQos.fromCode(qos)).payload("hello".getBytes()).send();
            var m = publishes.receive(10, TimeUnit.SECONDS);
            assertThat(m).isPresent();
            assertThat(Clients.text(m.get().getPayloadAsBytes())).isEqualTo("hello");
        } finally {
            sub.disconnect();
            pub.disconnect();
        }
    }

    @ParameterizedTest(name = "Paho v3 QoS {0}")
    @ValueSource(ints = {0, 1, 2})
    void pahoV3(int qos) throws Exception {
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        org.eclipse.paho.client.mqttv3.MqttClient sub = pahoV3("paho3-sub-" + qos, true);
        org.eclipse.paho.client.mqttv3.MqttClient pub = pahoV3("paho3-pub-" + qos, true);
        sub.setCallback(new MqttCallback() {
            @Override
            public void connectionLost(Throwable cause) {
            }

            @Override
            public void messageArrived(String topic, MqttMessage message) {
                got.add(topic + "=" + new String(message.getPayload(), StandardCharsets.UTF_8));
            }

            @Override
            public void deliveryComplete(IMqttDeliveryToken token) {
            }
        });
        sub.subscribe("rt/p3/" + qos, qos);
        pub.publish("rt/p3/" + qos, "paho".getBytes(), qos, false);
        assertThat(got.poll(10, TimeUnit.SECONDS)).isEqualTo("rt/p3/" + qos + "=paho");
        sub.disconnect();
        pub.disconnect();
        sub.close();
        pub.close();
    }

    @Test
    void pahoV3PersistentSessionReceivesWhatWasPublishedWhileOffline() throws Exception {
        org.eclipse.paho.client.mqttv3.MqttClient sub = pahoV3("paho3-offline", false);
        sub.subscribe("rt/offline", 1);
        sub.disconnect();
        sub.close();
        org.eclipse.paho.client.mqttv3.MqttClient pub = pahoV3("paho3-offline-pub", true);
        for (int i = 0; i < 5; i++) {
            pub.publish("rt/offline", ("o" + i).getBytes(), 1, false);
        }
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        org.eclipse.paho.client.mqttv3.MqttClient back = new org.eclipse.paho.client.mqttv3.MqttClient(broker.mqttUri(),
                "paho3-offline", new MemoryPersistence());
        back.setCallback(new MqttCallback() {
            @Override
            public void connectionLost(Throwable cause) {
            }

            @Override
            public void messageArrived(String topic, MqttMessage message) {
                got.add(new String(message.getPayload(), StandardCharsets.UTF_8));
            }

            @Override
            public void deliveryComplete(IMqttDeliveryToken token) {
            }
        });
        back.connect(options(false));
        for (int i = 0; i < 5; i++) {
            assertThat(got.poll(10, TimeUnit.SECONDS)).isEqualTo("o" + i);
        }
        back.disconnect();
        back.close();
        pub.disconnect();
        pub.close();
    }

    @ParameterizedTest(name = "Paho v5 QoS {0}")
    @ValueSource(ints = {0, 1, 2})
    void pahoV5(int qos) throws Exception {
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        org.eclipse.paho.mqttv5.client.MqttClient sub = pahoV5("paho5-sub-" + qos);
        org.eclipse.paho.mqttv5.client.MqttClient pub = pahoV5("paho5-pub-" + qos);
        sub.subscribe(new org.eclipse.paho.mqttv5.common.MqttSubscription[] {
            new org.eclipse.paho.mqttv5.common.MqttSubscription("rt/p5/" + qos, qos)},
                new org.eclipse.paho.mqttv5.client.IMqttMessageListener[] {
                    (topic, message) -> got.add(new String(message.getPayload(), StandardCharsets.UTF_8))});
        pub.publish("rt/p5/" + qos, "five".getBytes(), qos, false);
        assertThat(got.poll(10, TimeUnit.SECONDS)).isEqualTo("five");
        sub.disconnect();
        pub.disconnect();
        sub.close();
        pub.close();
    }

    private org.eclipse.paho.client.mqttv3.MqttClient pahoV3(String id, boolean clean) throws Exception {
        org.eclipse.paho.client.mqttv3.MqttClient c = new org.eclipse.paho.client.mqttv3.MqttClient(broker.mqttUri(), id,
                new MemoryPersistence());
        c.connect(options(clean));
        return c;
    }

    private static MqttConnectOptions options(boolean clean) {
        MqttConnectOptions o = new MqttConnectOptions();
        o.setCleanSession(clean);
        o.setUserName("alice");
        o.setPassword(ItStack.PASSWORD.toCharArray());
        o.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
        return o;
    }

    private org.eclipse.paho.mqttv5.client.MqttClient pahoV5(String id) throws Exception {
        org.eclipse.paho.mqttv5.client.MqttClient c = new org.eclipse.paho.mqttv5.client.MqttClient(broker.mqttUri(), id,
                new org.eclipse.paho.mqttv5.client.persist.MemoryPersistence());
        MqttConnectionOptions o = new MqttConnectionOptions();
        o.setUserName("alice");
        o.setPassword(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8));
        o.setCleanStart(true);
        c.connect(o);
        return c;
    }

}
