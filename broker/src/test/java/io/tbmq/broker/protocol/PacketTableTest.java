package io.tbmq.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.Hex;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/**
 * The byte-level packet table (src/test/resources/packet-table.json): raw bytes in, exact bytes
 * (or a byte prefix) expected back, and whether the broker closes the connection. Each case
 * names the normative statement or section it checks; the same table seeds the fuzzers.
 */
class PacketTableTest {
    private static final String CONNECT_V31 = "10 0f 00 06 4d 51 49 73 64 70 03 02 00 3c 00 01 74";
    private static final String CONNECT_V311 = "10 0d 00 04 4d 51 54 54 04 02 00 3c 00 01 74";
    private static final String CONNECT_V5 = "10 0e 00 04 4d 51 54 54 05 02 00 3c 00 00 01 74";
    static JsonNode table() throws IOException {
        try (InputStream in = PacketTableTest.class.getResourceAsStream("/packet-table.json")) {
            return new ObjectMapper().readTree(in).get("cases");
        }
    }

    static Stream<Arguments> cases() throws IOException {
        List<Arguments> out = new ArrayList<>();
        for (JsonNode c : table()) {
            out.add(Arguments.of("[" + c.get("spec").asText() + "] " + c.get("name").asText(), c));
        }
        return out.stream();
    }

    @Test
    void tableHasAtLeast300CasesEachNamingItsSpecStatement() throws IOException {
        JsonNode table = table();
        assertThat(table.size()).isGreaterThanOrEqualTo(300);
        for (JsonNode c : table) {
            assertThat(c.get("spec").asText()).as(c.get("name").asText()).matches("MQTT-\\d(\\.\\d+)*-\\d+|§[\\d.]+");
            assertThat(c.has("expect") || c.has("expectPrefix")).as(c.get("name").asText()).isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void brokerAnswersAsTheSpecSays(String name, JsonNode c) {
        String session = c.get("session").asText();
        MqttVersion version = switch (session) {
            case "v31" -> MqttVersion.MQTT_3_1;
            case "v5" -> MqttVersion.MQTT_5;
            default -> MqttVersion.MQTT_3_1_1;
        };
        // A fresh broker per case: retained messages or Wills of one case must not answer in another.
        try (TestBroker broker = TestBroker.anonymous(); WireClient client = broker.client(version)) {
            switch (session) {
                case "v31" -> client.sendHex(CONNECT_V31);
                case "v311" -> client.sendHex(CONNECT_V311);
                case "v5" -> client.sendHex(CONNECT_V5);
                default -> {
                }
            }
            if (c.has("setup")) {
                for (JsonNode packet : c.get("setup")) {
                    client.sendHex(packet.asText());
                }
            }
            byte[] preamble = client.rawBytes();
            if (!session.equals("none")) {
                assertThat(preamble).as("preamble CONNACK accepted").startsWith((byte) 0x20);
            }
            client.sendHex(c.get("in").asText());
            byte[] answer = client.rawBytes();
            if (c.has("expect")) {
                assertThat(Hex.of(answer)).isEqualTo(Hex.of(Hex.bytes(c.get("expect").asText())));
            } else {
                String[] prefix = c.get("expectPrefix").asText().trim().split("\\s+");
                assertThat(answer.length).as("answer %s", Hex.of(answer)).isGreaterThanOrEqualTo(prefix.length);
                for (int i = 0; i < prefix.length; i++) {
                    if (!prefix[i].equals("??")) {
                        assertThat(String.format("%02x", answer[i])).as("byte %d of %s", i, Hex.of(answer)).isEqualTo(prefix[i]);
                    }
                }
            }
            assertThat(!client.isOpen()).as("connection closed").isEqualTo(c.get("closed").asBoolean());
        }
    }
}
