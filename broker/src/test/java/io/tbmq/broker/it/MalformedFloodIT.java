package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.tbmq.localstack.BrokerNode;

/**
 * A flood of malformed input against the real broker process (PARANOID leak detection on):
 * random bytes, and every packet of the packet table, on many connections at once. Afterwards the
 * broker still serves clients, logged no stack trace and leaked no buffer.
 */
class MalformedFloodIT {
    private final BrokerNode broker = ItStack.get().broker();
    private static final String CONNECT_V5 = "10 0e 00 04 4d 51 54 54 05 02 00 3c 00 00 01 74";

    @Test
    void floodOfMalformedPacketsNeitherCrashesNorLeaks() throws Exception {
        long logStart = Files.size(broker.log());
        Random random = new Random(42);
        List<byte[]> payloads = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            byte[] garbage = new byte[1 + random.nextInt(2_000)];
            random.nextBytes(garbage);
            payloads.add(garbage);
        }
        try (InputStream in = getClass().getResourceAsStream("/packet-table.json")) {
            for (JsonNode c : new ObjectMapper().readTree(in).get("cases")) {
                if (c.get("closed").asBoolean()) {
                    String prefix = c.get("session").asText().equals("none") ? "" : CONNECT_V5;
                    payloads.add(HexFormat.of().parseHex((prefix + c.get("in").asText()).replace(" ", "")));
                }
            }
        }
        int sent = 0;
        for (int round = 0; round < 3; round++) {
            List<Socket> open = new ArrayList<>();
            for (byte[] p : payloads) {
                Socket s = new Socket("127.0.0.1", broker.mqttPort());
                s.setSoTimeout(2_000);
                try {
                    OutputStream out = s.getOutputStream();
                    out.write(p);
                    out.flush();
                    sent++;
                } catch (IOException closedAlready) {
                    // the broker may close before all bytes arrived: that is the point
                }
                open.add(s);
                if (open.size() >= 100) {
                    drainAndClose(open);
                }
            }
            drainAndClose(open);
        }
        assertThat(sent).isGreaterThan(600);

        // Collected buffers are reported as leaks on later allocations: force a GC, then allocate.
        new ProcessBuilder("jcmd", Long.toString(broker.process().pid()), "GC.run").redirectErrorStream(true).start()
                .waitFor(30, TimeUnit.SECONDS);
        Mqtt5BlockingClient c = Clients.alice5(broker, "after-flood");
        try (var publishes = c.publishes(MqttGlobalPublishFilter.ALL)) {
            c.subscribeWith().topicFilter("flood/ok").qos(MqttQos.AT_LEAST_ONCE).send();
            for (int i = 0; i < 50; i++) {
                c.publishWith().topic("flood/ok").qos(MqttQos.AT_LEAST_ONCE).payload(new byte[512]).send();
            }
            for (int i = 0; i < 50; i++) {
                assertThat(publishes.receive(10, TimeUnit.SECONDS)).isPresent();
            }
        } finally {
            c.disconnect();
        }
        assertThat(broker.status("/q/health/live")).isEqualTo(200);
        assertThat(broker.process().isAlive()).isTrue();

        String log = new String(Files.readAllBytes(broker.log()), StandardCharsets.UTF_8).substring((int) logStart);
        assertThat(log).doesNotContain("LEAK:");
        assertThat(log.lines().filter(l -> l.startsWith("\tat ")).count()).as("stack trace lines in the log").isZero();
        assertThat(log).contains("ProtocolErrors");
    }

    private static void drainAndClose(List<Socket> sockets) {
        for (Socket s : sockets) {
            try (s) {
                s.getInputStream().readNBytes(1024);
            } catch (IOException ignored) {
                // reset or timeout: the broker closed it
            }
        }
        sockets.clear();
    }
}
