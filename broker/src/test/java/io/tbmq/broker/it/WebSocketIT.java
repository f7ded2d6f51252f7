package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5ClientBuilder;

import io.tbmq.localstack.BrokerNode;

/** MQTT over WebSocket (path /mqtt, subprotocol mqtt) and secure WebSocket. */
class WebSocketIT {
    private final ItStack it = ItStack.get();
    private final BrokerNode broker = it.broker();

    private Mqtt5BlockingClient client(String id, boolean secure) throws Exception {
        Mqtt5ClientBuilder b = MqttClient.builder().useMqttVersion5().identifier(id).serverHost("localhost")
                .serverPort(secure ? broker.wssPort() : broker.wsPort())
                .webSocketConfig().serverPath("mqtt").subprotocol("mqtt").applyWebSocketConfig();
        if (secure) {
            b = b.sslConfig().trustManagerFactory(trustCa()).applySslConfig();
        }
        Mqtt5BlockingClient c = b.buildBlocking();
        c.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .applySimpleAuth().send();
        return c;
    }

    private TrustManagerFactory trustCa() throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(it.certs().caCert())) {
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf;
    }

    @ParameterizedTest(name = "secure={0}")
    @ValueSource(booleans = {false, true})
    void publishAndSubscribeOverWebSocket(boolean secure) throws Exception {
        Mqtt5BlockingClient sub = client("ws-sub-" + secure, secure);
        Mqtt5BlockingClient pub = client("ws-pub-" + secure, secure);
        try (var publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
            sub.subscribeWith().topicFilter("ws/" + secure).qos(MqttQos.AT_LEAST_ONCE).send();
            byte[] big = new byte[100_000];
            pub.publishWith().topic("ws/" + secure).qos(MqttQos.AT_LEAST_ONCE).payload(big).send();
            pub.publishWith().topic("ws/" + secure).qos(MqttQos.AT_LEAST_ONCE).payload("small".getBytes()).send();
            assertThat(publishes.receive(10, TimeUnit.SECONDS)).get().satisfies(p -> assertThat(p.getPayloadAsBytes()).hasSize(100_000));
            assertThat(publishes.receive(10, TimeUnit.SECONDS)).get()
                    .satisfies(p -> assertThat(Clients.text(p.getPayloadAsBytes())).isEqualTo("small"));
        } finally {
            sub.disconnect();
            pub.disconnect();
        }
    }
}
