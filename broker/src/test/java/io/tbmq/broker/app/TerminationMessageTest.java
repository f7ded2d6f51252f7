package io.tbmq.broker.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TerminationMessageTest {

    @Test
    void aWrappedFailureIsDescribedByEveryDistinctMessageOutermostFirst() {
        Exception cause = new IllegalStateException("another broker process (ab12, pod x) runs with node id n-0");
        Exception wrapped = new RuntimeException("Failed to start quarkus", new RuntimeException(cause));

        assertThat(TerminationMessage.describe(wrapped))
                .isEqualTo("another broker process (ab12, pod x) runs with node id n-0");
        assertThat(TerminationMessage.describe(new RuntimeException("Kafka at k:9092 refused", new java.net.ConnectException("Connection refused"))))
                .isEqualTo("Kafka at k:9092 refused: Connection refused");
        assertThat(TerminationMessage.describe(new NullPointerException())).isEqualTo("java.lang.NullPointerException");
    }

    @Test
    void anErrorExitWritesWhyAndACleanExitNothing(@TempDir Path dir) throws Exception {
        Path log = Files.createFile(dir.resolve("termination-log"));
        System.setProperty(TerminationMessage.PROPERTY, log.toString());
        try {
            TerminationMessage.onExit(0, new IllegalStateException("not an error exit"));
            assertThat(Files.readString(log)).as("a clean exit writes nothing").isEmpty();

            TerminationMessage.onExit(1, new IllegalArgumentException("tbmq.node-id must be letters"));
            assertThat(Files.readString(log)).isEqualTo("tbmq.node-id must be letters");

            TerminationMessage.record("node n-0 failed to start while reading nodes: Kafka timed out");
            TerminationMessage.record("node n-0 interrupted while stopping");
            TerminationMessage.onExit(1, null);
            assertThat(Files.readString(log)).as("the first reason, which the exit followed from")
                    .isEqualTo("node n-0 failed to start while reading nodes: Kafka timed out");
        } finally {
            TerminationMessage.forget();
            System.clearProperty(TerminationMessage.PROPERTY);
        }
    }

    @Test
    void nothingIsWrittenWhereTheFileDoesNotExist(@TempDir Path dir) {
        Path absent = dir.resolve("termination-log");

        TerminationMessage.write(absent, "why");

        assertThat(absent).doesNotExist();
    }

    @Test
    void aLongMessageIsCutToWhatTheKubeletKeepsWithoutSplittingACharacter(@TempDir Path dir) throws Exception {
        Path log = Files.writeString(dir.resolve("termination-log"), "x".repeat(10_000));
        String message = "a".repeat(4095) + "é and more";

        TerminationMessage.write(log, message);

        byte[] written = Files.readAllBytes(log);
        assertThat(written).hasSize(4095);
        assertThat(new String(written, StandardCharsets.UTF_8)).isEqualTo("a".repeat(4095));
    }
}
