package io.tbmq.broker.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A mounted ConfigMap changes under a running broker: each changed setting is applied once, the rest left alone. */
class LiveSettingsTest {

    @Test
    void aChangedValueIsAppliedOnceAndUnchangedOnesAreNot(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("live.properties");
        Files.writeString(file, "tbmq.redis.lettuce-batch-size=150\ntbmq.kafka.msg-all-partitions=12\n");
        List<String> applied = new ArrayList<>();
        LiveSettings live = new LiveSettings(file).on("tbmq.redis.lettuce-batch-size", v -> applied.add("batch=" + v))
                .on("tbmq.kafka.msg-all-partitions", v -> applied.add("partitions=" + v)).baseline();
        live.refresh();
        assertThat(applied).as("the values it started with").isEmpty();

        Files.writeString(file, "tbmq.redis.lettuce-batch-size=400\ntbmq.kafka.msg-all-partitions=12\n");
        live.refresh();
        live.refresh();
        assertThat(applied).containsExactly("batch=400");
    }

    @Test
    void aValueThatCannotBeAppliedIsTriedAgainWhenTheFileChanges(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("live.properties");
        Files.writeString(file, "tbmq.redis.lettuce-batch-size=150\n");
        List<Integer> applied = new ArrayList<>();
        LiveSettings live = new LiveSettings(file).on("tbmq.redis.lettuce-batch-size", v -> {
            int size = Integer.parseInt(v);
            if (size < 1) {
                throw new IllegalArgumentException("at least 1");
            }
            applied.add(size);
        }).baseline();
        Files.writeString(file, "tbmq.redis.lettuce-batch-size=0\n");
        live.refresh();
        Files.writeString(file, "tbmq.redis.lettuce-batch-size=300\n");
        live.refresh();
        assertThat(applied).containsExactly(300);
    }

    @Test
    void aMissingFileChangesNothing(@TempDir Path dir) {
        List<String> applied = new ArrayList<>();
        LiveSettings live = new LiveSettings(dir.resolve("absent")).on("x", applied::add).baseline();
        live.refresh();
        assertThat(applied).isEmpty();
    }

    @Test
    void keysMatchingAPatternAreAppliedAtStartAndOnChangeWithTheirNameAndARemovedKeyKeepsItsValue(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("live.properties");
        Files.writeString(file, "tbmq.listeners.tcp.max-connections=100\n");
        List<String> applied = new ArrayList<>();
        LiveSettings live = new LiveSettings(file)
                .onMatching(java.util.regex.Pattern.compile("tbmq\\.listeners\\.\\w+\\.max-connections"), (k, v) -> applied.add(k + "=" + v))
                .baseline();
        Files.writeString(file, "tbmq.listeners.tcp.max-connections=100\ntbmq.listeners.ws.max-connections=7\nother=1\n");
        live.refresh();
        Files.writeString(file, "tbmq.listeners.tcp.max-connections=50\n");
        live.refresh();
        assertThat(applied).containsExactly("tbmq.listeners.tcp.max-connections=100", "tbmq.listeners.ws.max-connections=7",
                "tbmq.listeners.tcp.max-connections=50");
    }
}
