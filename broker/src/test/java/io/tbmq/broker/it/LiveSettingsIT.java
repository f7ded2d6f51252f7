package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.tbmq.localstack.BrokerNode;

/**
 * The live settings file as the operator writes it (a mounted ConfigMap, also a configuration
 * source at start): a connection limit and a log level change under a running broker, which applies
 * them without a restart.
 */
class LiveSettingsIT {
    private static final Path FILE = Path.of("target", "live-settings-it-file", "live.properties").toAbsolutePath();
    private static final String PROTOCOL_LEVEL = "quarkus.log.category.\"io.tbmq.broker.transport\".level";
    private static ItStack it;
    private static BrokerNode broker;
    private static final List<Mqtt5BlockingClient> clients = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        Files.createDirectories(FILE.getParent());
        Files.writeString(FILE, "tbmq.listeners.tcp.max-connections=2\n");
        it = ItStack.isolated("live-settings-it", Map.of("tbmq.live-settings-file", FILE.toString(),
                "tbmq.live-settings-interval", "200ms", "quarkus.config.locations", FILE.toString()));
        broker = it.broker();
    }

    @AfterAll
    static void stop() {
        clients.forEach(c -> {
            try {
                c.disconnect();
            } catch (RuntimeException e) {
                // already closed by the broker
            }
        });
        if (it != null) {
            it.close();
        }
    }

    private static boolean connects(String clientId) {
        try {
            clients.add(Clients.alice5(broker, clientId));
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Test
    void aConnectionLimitAndALogLevelChangeWithoutARestart() throws Exception {
        long pid = broker.process().pid();
        assertThat(connects("live-1")).isTrue();
        assertThat(connects("live-2")).isTrue();
        assertThat(connects("live-3")).as("the limit read from the file at start").isFalse();
        assertThat(Files.readString(broker.log())).as("no DEBUG line of the transport at the start level")
                .doesNotContain("at its limit of 2 connections");

        Files.writeString(FILE, "tbmq.listeners.tcp.max-connections=3\n" + PROTOCOL_LEVEL + "=DEBUG\n");
        Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300))
                .until(() -> connects("live-3"));
        assertThat(connects("live-4")).as("the new limit holds").isFalse();
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> Files.readString(broker.log()).contains("listener tcp at its limit of 3 connections"));
        assertThat(Files.readString(broker.log())).contains("applied tbmq.listeners.tcp.max-connections=3 without a restart",
                "applied " + PROTOCOL_LEVEL + "=DEBUG without a restart");

        Files.writeString(FILE, "tbmq.listeners.tcp.max-connections=bogus\n" + PROTOCOL_LEVEL + "=DEBUG\n");
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> Files.readString(broker.log()).contains("could not apply tbmq.listeners.tcp.max-connections=bogus"));
        assertThat(connects("live-5")).as("a value that cannot be applied leaves the last one").isFalse();
        assertThat(broker.process().pid()).as("the same broker process throughout").isEqualTo(pid);
        assertThat(broker.ready()).isTrue();
    }
}
