package io.tbmq.broker.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.testing.Hex;

class Utf8Test {

    @Test
    void acceptsWellFormedTextOfEveryLength() {
        for (String s : new String[] {"", "ascii", "ü", "город", "€", "🌡", "\uFEFFbom"}) {
            assertThat(Utf8.isValid(s.getBytes(StandardCharsets.UTF_8))).as(s).isTrue();
        }
    }

    @Test
    void refusesWhatMqttForbids() {
        for (String hex : new String[] {"00", "61 00", "80", "c0 80", "c1 bf", "e0 80 80", "ed a0 80", "ed bf bf",
            "f4 90 80 80", "f5 80 80 80", "ff", "e2 82", "f0 9f 8c"}) {
            assertThat(Utf8.isValid(Hex.bytes(hex))).as(hex).isFalse();
        }
    }
}
