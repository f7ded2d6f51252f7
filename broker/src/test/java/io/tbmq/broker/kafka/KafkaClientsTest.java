package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.tbmq.broker.config.KafkaConfig;

/** Client settings from a mounted properties file (the operator's spec.kafka.clientSecret) and inline ones. */
class KafkaClientsTest {

    private static KafkaConfig config(Optional<String> file, Map<String, String> inline) {
        return config(file, inline, java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(500));
    }

    private static KafkaConfig config(Optional<String> file, Map<String, String> inline, java.time.Duration session,
            java.time.Duration heartbeat) {
        return config(file, inline, session, heartbeat, java.time.Duration.ofSeconds(30));
    }

    private static KafkaConfig config(Optional<String> file, Map<String, String> inline, java.time.Duration session,
            java.time.Duration heartbeat, java.time.Duration batchTimeout) {
        return (KafkaConfig) Proxy.newProxyInstance(KafkaConfig.class.getClassLoader(), new Class<?>[] { KafkaConfig.class },
                (proxy, method, args) -> switch (method.getName()) {
                    case "bootstrapServers" -> "kafka:9092";
                    case "propertiesFile" -> file;
                    case "consumerMaxPollRecords" -> 500;
                    case "consumerFetchMinBytes" -> 65536;
                    case "consumerFetchMaxWait" -> java.time.Duration.ofMillis(10);
                    case "consumerCommitInterval" -> java.time.Duration.ofMillis(100);
                    case "metadataMaxAge" -> java.time.Duration.ofSeconds(30);
                    case "consumerMetadataMaxAge" -> java.time.Duration.ofSeconds(3);
                    case "consumerSessionTimeout" -> session;
                    case "consumerBatchTimeout" -> batchTimeout;
                    case "consumerHeartbeatInterval" -> heartbeat;
                    case "properties" -> inline;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aPropertiesFileAddsClientSettingsAndInlineOnesWin(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("client.properties");
        Files.writeString(file, "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n");
        Properties p = new KafkaClients(config(Optional.of(file.toString()), Map.of("sasl.mechanism", "PLAIN")), "node-0")
                .common("test");
        assertThat(p).containsEntry("security.protocol", "SASL_SSL").containsEntry("sasl.mechanism", "PLAIN")
                .containsEntry("bootstrap.servers", "kafka:9092");
    }

    @Test
    void aBatchTimeoutOutsideWhatTheConsumersAllowIsRefusedByName() {
        for (java.time.Duration bad : List.of(java.time.Duration.ZERO, java.time.Duration.ofSeconds(-1))) {
            assertThatThrownBy(() -> new KafkaClients(config(Optional.empty(), Map.of(), java.time.Duration.ofSeconds(10),
                    java.time.Duration.ofMillis(500), bad), "node-0"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("tbmq.kafka.consumer-batch-timeout must be more than 0, not " + bad);
        }
        // A consumer waits that long without polling: no longer than its group lets a member go without.
        assertThatThrownBy(() -> new KafkaClients(config(Optional.empty(), Map.of(), java.time.Duration.ofSeconds(10),
                java.time.Duration.ofMillis(500), java.time.Duration.ofMinutes(5)), "node-0"))
                .hasMessage("tbmq.kafka.consumer-batch-timeout must be at most the consumers' max.poll.interval.ms less 10 s (290000 ms), not PT5M");
        assertThatThrownBy(() -> new KafkaClients(config(Optional.empty(), Map.of("max.poll.interval.ms", "60000"),
                java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(55)), "node-0"))
                .hasMessage("tbmq.kafka.consumer-batch-timeout must be at most the consumers' max.poll.interval.ms less 10 s (50000 ms), not PT55S");
        assertThatThrownBy(() -> new KafkaClients(config(Optional.empty(), Map.of("max.poll.interval.ms", "5m"),
                java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(30)), "node-0"))
                .hasMessage("tbmq.kafka.properties.max.poll.interval.ms must be a number of milliseconds, not 5m");
        assertThat(new KafkaClients(config(Optional.empty(), Map.of(), java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(500),
                java.time.Duration.ofSeconds(2)), "node-0").batchTimeout()).isEqualTo(java.time.Duration.ofSeconds(2));
    }

    @Test
    void routingConsumersReadAPartitionWithoutCommittedOffsetFromItsStart() {
        // A new cluster's first messages, and those on partitions the operator just added, were
        // published before the group ever read them: starting at the end would drop them.
        Properties p = new KafkaClients(config(Optional.empty(), Map.of()), "node-0").consumer("tbmq-msg-all-router", "router-0");
        assertThat(p).containsEntry("auto.offset.reset", "earliest").containsEntry("group.instance.id", "tbmq-node-0-router-0");
    }

    @Test
    void routingConsumersBatchFetchesButAnApplicationClientsConsumerGetsEachMessageAtOnce() {
        KafkaClients clients = new KafkaClients(config(Optional.empty(), Map.of()), "node-0");
        assertThat(clients.consumer("tbmq-msg-all-router", "router-0")).containsEntry("fetch.min.bytes", "65536")
                .containsEntry("fetch.max.wait.ms", "10");
        Properties app = clients.clientConsumer("tbmq-app-c1", "app-1", java.time.Duration.ofMillis(100));
        assertThat(app).containsEntry("fetch.min.bytes", "1").containsEntry("fetch.max.wait.ms", "100")
                .containsEntry("group.id", "tbmq-app-c1");
    }

    @Test
    void theConsumerDrainingTheEmptyPersistedTopicAsksKafkaRarelyButGetsWhatComesAtOnce() {
        Properties drain = new KafkaClients(config(Optional.empty(), Map.of()), "node-0").drainConsumer("tbmq-msg-persisted", "persisted-0");
        assertThat(drain).containsEntry("fetch.min.bytes", "1").containsEntry("fetch.max.wait.ms", "500")
                .containsEntry("group.id", "tbmq-msg-persisted");
    }

    @Test
    void consumersHeartbeatOftenSoARebalanceIsNoticedWithinHalfASecondButNeverPastAThirdOfTheSession() {
        Properties p = new KafkaClients(config(Optional.empty(), Map.of()), "node-0").consumer("tbmq-msg-all-router", "router-0");
        assertThat(p).containsEntry("heartbeat.interval.ms", "500").containsEntry("session.timeout.ms", "10000");
        Properties tight = new KafkaClients(config(Optional.empty(), Map.of(), java.time.Duration.ofSeconds(1),
                java.time.Duration.ofMillis(500)), "node-0").consumer("tbmq-msg-all-router", "router-0");
        assertThat(tight).containsEntry("heartbeat.interval.ms", "333");
    }

    @Test
    void anUnreadableFileIsAClearStartupError(@TempDir Path dir) {
        assertThatThrownBy(() -> new KafkaClients(config(Optional.of(dir.resolve("missing").toString()), Map.of()), "node-0"))
                .hasMessageContaining("tbmq.kafka.properties-file").hasMessageContaining("missing");
    }

    @Test
    void aMaxPollIntervalFromThePropertiesFileIsCheckedAgainstTheBatchTimeoutUnlessAnInlineOneOverridesIt(@TempDir Path dir)
            throws Exception {
        // The consumers would take 60 s from the file: a 55 s batch wait would get them expelled from their group.
        Path file = dir.resolve("client.properties");
        Files.writeString(file, "max.poll.interval.ms=60000\n");
        assertThatThrownBy(() -> new KafkaClients(config(Optional.of(file.toString()), Map.of(), java.time.Duration.ofSeconds(10),
                java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(55)), "node-0"))
                .hasMessage("tbmq.kafka.consumer-batch-timeout must be at most the consumers' max.poll.interval.ms less 10 s (50000 ms), not PT55S");
        assertThat(new KafkaClients(config(Optional.of(file.toString()), Map.of("max.poll.interval.ms", "120000"),
                java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(55)), "node-0")
                .consumer("tbmq-msg-all-router", "router-0")).containsEntry("max.poll.interval.ms", "120000");
        Files.writeString(file, "max.poll.interval.ms=5m\n");
        assertThatThrownBy(() -> new KafkaClients(config(Optional.of(file.toString()), Map.of()), "node-0"))
                .hasMessage("max.poll.interval.ms in tbmq.kafka.properties-file " + file + " must be a number of milliseconds, not 5m");
    }
}
