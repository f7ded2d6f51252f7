package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;

import io.tbmq.broker.auth.PasswordHasher;
import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.Certificates;

/**
 * A credentials Secret edited and a certificate renewed while clients are connected, as the
 * kubelet delivers them (the mounted files change in place): applied without a restart.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LiveCredentialsIT {
    private static final Path FILES = Path.of("target", "live-credentials-files").toAbsolutePath();
    private static final String OLD = PasswordHasher.hash("old-pw".toCharArray(), 10_000);
    private static final String NEW = PasswordHasher.hash("new-pw".toCharArray(), 10_000);
    private static ItStack it;
    private static BrokerNode broker;
    private static Path credentials;
    /** The users file as the operator writes it from TbmqUsers (meter-1, password meter-secret). */
    private static Path users;
    private static String operatorUsers;
    private static Certificates first;
    private static Certificates renewed;

    @BeforeAll
    static void start() throws Exception {
        Files.createDirectories(FILES);
        credentials = FILES.resolve("credentials.yaml");
        Files.writeString(credentials, """
                users:
                  - username: steady
                    password: "%1$s"
                    publish: ["#"]
                    subscribe: ["#"]
                  - username: leaver
                    password: "%1$s"
                    publish: ["#"]
                    subscribe: ["#"]
                  - username: rotated
                    password: "%1$s"
                  - username: watcher
                    password: "%1$s"
                    subscribe: ["plant/#"]
                  - username: writer
                    password: "%1$s"
                    publish: ["#"]
                """.formatted(OLD));
        try (InputStream in = LiveCredentialsIT.class.getResourceAsStream("/io/tbmq/broker/auth/users-file-from-operator.json")) {
            operatorUsers = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        users = Files.writeString(FILES.resolve("users.yaml"), operatorUsers);
        first = new Certificates(FILES.resolve("first")).ensureServer();
        renewed = new Certificates(FILES.resolve("renewed")).ensureServer();
        Files.copy(first.serverCert(), FILES.resolve("tls.crt"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(first.serverKey(), FILES.resolve("tls.key"), StandardCopyOption.REPLACE_EXISTING);
        it = ItStack.isolated("live-credentials-it", Map.of("tbmq.security.credentials-file", credentials.toString(),
                "tbmq.security.users-file", users.toString(),
                "tbmq.security.reload-interval", "500ms", "tbmq.listeners.tls.cert", FILES.resolve("tls.crt").toString(),
                "tbmq.listeners.tls.key", FILES.resolve("tls.key").toString()));
        broker = it.broker();
    }

    @AfterAll
    static void stop() {
        if (it != null) {
            it.close();
        }
    }

    /** A connected client and the DISCONNECT the broker sent it, if any. */
    private record Watched(Mqtt5BlockingClient client, CompletableFuture<Mqtt5DisconnectReasonCode> told) {
    }

    private static Watched connect(String user, String password) {
        CompletableFuture<Mqtt5DisconnectReasonCode> told = new CompletableFuture<>();
        Mqtt5BlockingClient c = MqttClient.builder().useMqttVersion5().identifier("live-" + user).serverHost("127.0.0.1")
                .serverPort(broker.mqttPort()).addDisconnectedListener(ctx -> {
                    if (ctx.getCause() instanceof Mqtt5DisconnectException e) {
                        told.complete(e.getMqttMessage().getReasonCode());
                    }
                }).buildBlocking();
        c.connectWith().simpleAuth().username(user).password(password.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
        return new Watched(c, told);
    }

    private static Optional<Mqtt5ConnAckReasonCode> refusal(String user, String password) {
        try {
            connect(user, password).client().disconnect();
            return Optional.empty();
        } catch (Mqtt5ConnAckException e) {
            return Optional.of(e.getMqttMessage().getReasonCode());
        }
    }

    private static double metric(String line) {
        return broker.get("/q/metrics").lines().filter(l -> l.startsWith(line)).mapToDouble(l -> Double.parseDouble(
                l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    @Order(1)
    void theOperatorsUsersFileAppliesBesideTheCredentialsFileAndAConflictChangesNothing() throws Exception {
        Watched meter = connect("meter-1", "meter-secret");
        Watched steady = connect("steady", "old-pw");
        double refused = metric("tbmq_reloads_total{result=\"refused\",what=\"credentials\"");

        // A user of the credentials file repeated in the users file: refused as a whole, nothing changes.
        Files.writeString(users, "{\"users\": [{\"username\": \"steady\", \"password\": \"" + NEW + "\"}]}\n");
        Awaitility.await().atMost(Duration.ofSeconds(15))
                .until(() -> metric("tbmq_reloads_total{result=\"refused\",what=\"credentials\"") > refused);
        assertThat(metric("tbmq_reload_refused{what=\"credentials\"")).as("what TbmqFileRefused alerts on").isEqualTo(1.0);
        assertThat(meter.told()).as("meter-1 stays connected").isNotDone();
        assertThat(refusal("steady", "new-pw")).contains(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);

        // The TbmqUser deleted: its connected client is told 0x87 and cannot come back.
        Files.writeString(users, "{\"users\": [], \"certificates\": []}\n");
        assertThat(meter.told().get(15, TimeUnit.SECONDS)).isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> metric("tbmq_reload_refused{what=\"credentials\"") == 0.0);
        assertThat(refusal("meter-1", "meter-secret")).contains(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);
        assertThat(steady.told()).as("a user of the credentials file is not touched").isNotDone();

        Files.writeString(users, operatorUsers);
        Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> refusal("meter-1", "meter-secret").isEmpty());
        steady.client().disconnect();
    }

    @Test
    @Order(2)
    void anEditedCredentialsFileAppliesToNewAndConnectedClientsWithoutARestart() throws Exception {
        double appliedBefore = metric("tbmq_reloads_total{result=\"applied\",what=\"credentials\"");
        Watched steady = connect("steady", "old-pw");
        Watched leaver = connect("leaver", "old-pw");
        Watched rotated = connect("rotated", "old-pw");
        Watched watcher = connect("watcher", "old-pw");
        watcher.client().subscribeWith().topicFilter("plant/#").qos(MqttQos.AT_LEAST_ONCE).send();
        Watched writer = connect("writer", "old-pw");
        assertThat(refusal("newcomer", "new-pw")).contains(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);

        Files.writeString(credentials, """
                users:
                  - username: steady
                    password: "%1$s"
                    publish: ["#"]
                    subscribe: ["#"]
                  - username: rotated
                    password: "%2$s"
                  - username: watcher
                    password: "%1$s"
                    subscribe: ["office/#"]
                  - username: writer
                    password: "%1$s"
                    publish: ["allowed/#"]
                  - username: newcomer
                    password: "%2$s"
                """.formatted(OLD, NEW));

        assertThat(leaver.told().get(15, TimeUnit.SECONDS)).as("a removed user").isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        assertThat(rotated.told().get(5, TimeUnit.SECONDS)).as("a changed password").isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        assertThat(watcher.told().get(5, TimeUnit.SECONDS)).as("a subscription no longer allowed")
                .isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        assertThat(refusal("newcomer", "new-pw")).as("a user added").isEmpty();
        assertThat(refusal("leaver", "old-pw")).contains(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);
        assertThat(refusal("rotated", "old-pw")).contains(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);
        assertThat(refusal("rotated", "new-pw")).isEmpty();

        // Narrowed publish rights hold from the writer's next packet; its connection stays.
        try {
            writer.client().publishWith().topic("plant/1").qos(MqttQos.AT_LEAST_ONCE).payload("x".getBytes()).send();
            throw new AssertionError("a publish outside the narrowed ACL was accepted");
        } catch (Mqtt5PubAckException e) {
            assertThat(e.getMqttMessage().getReasonCode()).isEqualTo(Mqtt5PubAckReasonCode.NOT_AUTHORIZED);
        }
        try (Mqtt5BlockingClient.Mqtt5Publishes in = steady.client().publishes(MqttGlobalPublishFilter.ALL)) {
            steady.client().subscribeWith().topicFilter("allowed/#").qos(MqttQos.AT_LEAST_ONCE).send();
            writer.client().publishWith().topic("allowed/1").qos(MqttQos.AT_LEAST_ONCE).payload("ok".getBytes()).send();
            Optional<Mqtt5Publish> got = in.receive(10, TimeUnit.SECONDS);
            assertThat(got).as("an unchanged user keeps working, the writer within its new rights").isPresent();
        }
        assertThat(steady.told()).isNotDone();
        assertThat(writer.told()).isNotDone();

        // A broken edit is refused and what is in force stays.
        Files.writeString(credentials, "users:\n  - username: steady\n    password: plain-text\n");
        Awaitility.await().atMost(Duration.ofSeconds(15))
                .until(() -> metric("tbmq_reloads_total{result=\"refused\",what=\"credentials\"") >= 1);
        assertThat(refusal("newcomer", "new-pw")).isEmpty();
        assertThat(steady.told()).isNotDone();
        assertThat(metric("tbmq_reloads_total{result=\"applied\",what=\"credentials\"")).isEqualTo(appliedBefore + 1);
        steady.client().disconnect();
        writer.client().disconnect();
    }

    @Test
    @Order(3)
    void aRenewedCertificateIsServedToNewConnections() throws Exception {
        assertThat(presented().getSerialNumber()).isEqualTo(read(first.serverCert()).getSerialNumber());
        Files.copy(renewed.serverKey(), FILES.resolve("tls.key"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(renewed.serverCert(), FILES.resolve("tls.crt"), StandardCopyOption.REPLACE_EXISTING);
        Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250))
                .until(() -> presented().getSerialNumber().equals(read(renewed.serverCert()).getSerialNumber()));
    }

    private static X509Certificate read(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    /** The certificate the TLS listener shows a new connection. */
    private static X509Certificate presented() throws IOException {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] {new X509TrustManager() {
                public void checkClientTrusted(X509Certificate[] chain, String authType) {
                }

                public void checkServerTrusted(X509Certificate[] chain, String authType) {
                }

                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            }}, null);
            try (SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", broker.tlsPort())) {
                socket.startHandshake();
                return (X509Certificate) socket.getSession().getPeerCertificates()[0];
            }
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException(e);
        }
    }
}
