package io.tbmq.broker.it;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5ClientBuilder;

import io.tbmq.localstack.BrokerNode;

/** Real MQTT clients pointed at an integration-test broker. */
final class Clients {
    private Clients() {
    }

    static Mqtt5ClientBuilder v5(BrokerNode broker, String clientId) {
        return MqttClient.builder().useMqttVersion5().identifier(clientId).serverHost("127.0.0.1")
                .serverPort(broker.mqttPort());
    }

    /** A connected v5 client (user alice) with a clean, non-persistent session. */
    static Mqtt5BlockingClient alice5(BrokerNode broker, String clientId) {
        Mqtt5BlockingClient c = v5(broker, clientId).buildBlocking();
        c.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .applySimpleAuth().send();
        return c;
    }

    static Mqtt3BlockingClient alice3(BrokerNode broker, String clientId) {
        Mqtt3BlockingClient c = MqttClient.builder().useMqttVersion3().identifier(clientId).serverHost("127.0.0.1")
                .serverPort(broker.mqttPort()).buildBlocking();
        c.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .applySimpleAuth().send();
        return c;
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static long seconds(long s) {
        return TimeUnit.SECONDS.toMillis(s);
    }
}
