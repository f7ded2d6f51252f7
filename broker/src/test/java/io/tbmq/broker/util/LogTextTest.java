package io.tbmq.broker.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogTextTest {
    @Test
    void aClientIdCannotStartANewLogLine() {
        String forged = "dev-1\n2026-11-21 12:00:00 INFO admin logged in\r\u2028\u0085";
        assertThat(LogText.of(forged)).doesNotContain("\n", "\r", "\u2028", "\u0085")
                .isEqualTo("dev-1\\u000a2026-11-21 12:00:00 INFO admin logged in\\u000d\\u2028\\u0085");
    }

    @Test
    void plainTextIsUnchangedAndLongTextIsCut() {
        assertThat(LogText.of("sensor-{7}/a")).isEqualTo("sensor-{7}/a");
        String huge = "x".repeat(70_000);
        assertThat(LogText.of(huge)).hasSize(LogText.MAX + "...(70000 chars)".length()).endsWith("...(70000 chars)");
        assertThat(LogText.of(null)).isEqualTo("null");
    }
}
