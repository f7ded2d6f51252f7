package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5ClientBuilder;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;

import io.netty.incubator.channel.uring.IOUring;
import io.tbmq.localstack.BrokerNode;

/**
 * A broker node whose listeners run on io_uring: every listener carries QoS 1 messages in order, large ones
 * included, to a persistent subscriber, live and after it reconnects. Skipped where the kernel refuses io_uring.
 */
class IoUringIT {
    private static BrokerNode node;

    @BeforeAll
    static void start() {
        assumeTrue(IOUring.isAvailable(), () -> "io_uring is not available here: " + IOUring.unavailabilityCause());
        node = ItStack.get().startBroker("io-uring", Map.of("tbmq.listeners.io-uring", "true"));
    }

    @AfterAll
    static void stop() {
        if (node != null) {
            node.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void theListenersRunOnIoUringAndTheDefaultStaysOnEpoll() throws Exception {
        assertThat(Files.readString(node.log())).contains("(io_uring transport,");
        assertThat(Files.readString(ItStack.get().broker().log())).contains("(epoll transport,")
                .doesNotContain("Both epoll and io_uring native transports are available");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"tcp", "tls", "ws", "wss"})
    void qos1InOrderLiveAndAfterAReconnect(String listener) throws Exception {
        String topic = "uring/" + listener;
        Mqtt5BlockingClient sub = connect(listener, "uring-sub-" + listener, false);
        Mqtt5BlockingClient pub = connect(listener, "uring-pub-" + listener, true);
        try {
            try (var publishes = sub.publishes(MqttGlobalPublishFilter.ALL)) {
                sub.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
                for (int i = 0; i < 200; i++) {
                    pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(payload(i)).send();
                }
                for (int i = 0; i < 200; i++) {
                    assertPayload(publishes.receive(10, TimeUnit.SECONDS), i);
                }
            }
            sub.disconnect();
            for (int i = 200; i < 250; i++) {
                pub.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(payload(i)).send();
            }
            Mqtt5BlockingClient again = client(listener, "uring-sub-" + listener);
            try (var publishes = again.publishes(MqttGlobalPublishFilter.ALL)) {
                again.connectWith().cleanStart(false).sessionExpiryInterval(300).simpleAuth().username("alice")
                        .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
                for (int i = 200; i < 250; i++) {
                    assertPayload(publishes.receive(10, TimeUnit.SECONDS), i);
                }
            } finally {
                again.disconnect();
            }
        } finally {
            pub.disconnect();
        }
    }

    /** Every tenth message is 200 kB, more than one write of the socket takes. */
    private static byte[] payload(int i) {
        byte[] text = ("m" + i).getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[i % 10 == 9 ? 200_000 : text.length];
        System.arraycopy(text, 0, out, 0, text.length);
        return out;
    }

    private static void assertPayload(Optional<Mqtt5Publish> received, int i) {
        assertThat(received).as("message %d", i).isPresent();
        byte[] bytes = received.get().getPayloadAsBytes();
        assertThat(bytes).as("message %d", i).startsWith(("m" + i).getBytes(StandardCharsets.UTF_8)).hasSize(payload(i).length);
    }

    private static Mqtt5BlockingClient connect(String listener, String id, boolean clean) throws Exception {
        Mqtt5BlockingClient c = client(listener, id);
        c.connectWith().cleanStart(clean).sessionExpiryInterval(clean ? 0 : 300).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
        return c;
    }

    private static Mqtt5BlockingClient client(String listener, String id) throws Exception {
        Mqtt5ClientBuilder b = MqttClient.builder().useMqttVersion5().identifier(id).serverHost("localhost");
        b = switch (listener) {
            case "tcp" -> b.serverPort(node.mqttPort());
            case "tls" -> b.serverPort(node.tlsPort());
            case "ws" -> b.serverPort(node.wsPort());
            default -> b.serverPort(node.wssPort());
        };
        if (listener.startsWith("ws")) {
            b = b.webSocketConfig().serverPath("mqtt").subprotocol("mqtt").applyWebSocketConfig();
        }
        if (listener.equals("tls") || listener.equals("wss")) {
            b = b.sslConfig().trustManagerFactory(trustCa()).applySslConfig();
        }
        return b.buildBlocking();
    }

    private static TrustManagerFactory trustCa() throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(ItStack.get().certs().caCert())) {
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf;
    }
}
