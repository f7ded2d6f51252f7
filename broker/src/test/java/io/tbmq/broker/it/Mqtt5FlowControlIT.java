package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;

import io.tbmq.localstack.BrokerNode;

/** MQTT 5 §4.9 flow control: the broker honours the client's Receive Maximum. */
class Mqtt5FlowControlIT {
    private final BrokerNode broker = ItStack.get().broker();

    @Test
    void neverMoreUnacknowledgedMessagesThanTheClientsReceiveMaximum() throws Exception {
        Mqtt5AsyncClient sub = Clients.v5(broker, "f-slow").buildAsync();
        List<Mqtt5Publish> held = new CopyOnWriteArrayList<>();
        sub.publishes(MqttGlobalPublishFilter.ALL, held::add, true);
        sub.connectWith().restrictions().receiveMaximum(2).applyRestrictions().simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send().get(10, TimeUnit.SECONDS);
        sub.subscribeWith().topicFilter("flow/q1").qos(MqttQos.AT_LEAST_ONCE).send().get(10, TimeUnit.SECONDS);
        Mqtt5BlockingClient pub = Clients.alice5(broker, "f-pub");
        for (int i = 0; i < 6; i++) {
            pub.publishWith().topic("flow/q1").qos(MqttQos.AT_LEAST_ONCE).payload(("m" + i).getBytes()).send();
        }
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> held.size() == 2);
        Thread.sleep(1_000);
        assertThat(held).as("window of 2 until acknowledged").hasSize(2);
        for (int round = 0; round < 2; round++) {
            int before = held.size();
            held.subList(before - 2, before).forEach(Mqtt5Publish::acknowledge);
            Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> held.size() == before + 2);
        }
        assertThat(held).extracting(p -> Clients.text(p.getPayloadAsBytes())).containsExactly("m0", "m1", "m2", "m3", "m4", "m5");
        held.subList(4, 6).forEach(Mqtt5Publish::acknowledge);
        sub.disconnect();
        pub.disconnect();
    }
}
