package io.tbmq.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;

class BrokerMetricsTest {

    @Test
    void theCountersTheAlertsRateOverAreExportedAtZeroBeforeTheirFirstEvent() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new BrokerMetrics(registry);
        String scrape = registry.scrape().replace(",}", "}"); // this client ends label sets with a comma, Quarkus' does not
        for (String script : BrokerMetrics.REDIS_SCRIPTS) {
            assertThat(scrape).contains("tbmq_redis_script_errors_total{script=\"" + script + "\"} 0.0");
        }
        for (String what : BrokerMetrics.RELOADED_FILES) {
            assertThat(scrape).contains("tbmq_reloads_total{result=\"refused\",what=\"" + what + "\"} 0.0",
                    "tbmq_reloads_total{result=\"applied\",what=\"" + what + "\"} 0.0");
        }
        assertThat(scrape).contains("tbmq_messages_dropped_total{reason=\"queue-full\"} 0.0", "tbmq_publish_failed_total 0.0",
                "tbmq_partition_moves_total{result=\"bounded\"} 0.0");
        for (String reason : BrokerMetrics.PUBLISH_REFUSALS) {
            assertThat(scrape).contains("tbmq_publish_refused_total{reason=\"" + reason + "\"} 0.0");
        }
        for (String what : BrokerMetrics.RELOADED_FILES) {
            assertThat(scrape).contains("tbmq_reload_refused{what=\"" + what + "\"} 0.0");
        }
    }

    @Test
    void everyScriptOfTheDeviceStoreIsListed() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("src/main/resources/io/tbmq/broker/persistence/redis"))) {
            assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".lua")).map(n -> n.replace(".lua", "")))
                    .containsExactlyInAnyOrderElementsOf(BrokerMetrics.REDIS_SCRIPTS);
        }
    }

    @Test
    void eventsAreCountedOnTheMetersRegisteredAtStart() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        BrokerMetrics metrics = new BrokerMetrics(registry);
        metrics.redisScript("add", 1_000_000, true);
        metrics.reloaded("credentials", false);
        metrics.publishRefused("store-down");
        String scrape = registry.scrape().replace(",}", "}"); // this client ends label sets with a comma, Quarkus' does not
        assertThat(scrape).contains("tbmq_redis_script_errors_total{script=\"add\"} 1.0",
                "tbmq_redis_script_latency_seconds_count{script=\"add\"} 1",
                "tbmq_reloads_total{result=\"refused\",what=\"credentials\"} 1.0",
                "tbmq_reload_refused{what=\"credentials\"} 1.0", "tbmq_publish_refused_total{reason=\"store-down\"} 1.0");
        metrics.reloaded("credentials", true);
        assertThat(registry.scrape().replace(",}", "}")).as("a valid file applied ends the refusal")
                .contains("tbmq_reload_refused{what=\"credentials\"} 0.0");
    }

    @Test
    void aListenersShedCountsAreExportedAtZeroAndCountTheirReason() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        BrokerMetrics metrics = new BrokerMetrics(registry);
        metrics.listenerOpened("tls");
        String scrape = registry.scrape().replace(",}", "}");
        for (String reason : BrokerMetrics.SHED_REASONS) {
            assertThat(scrape).contains("tbmq_connections_shed_total{listener=\"tls\",reason=\"" + reason + "\"} 0.0");
        }
        metrics.connectionShed("tls", "limit");
        assertThat(registry.scrape().replace(",}", "}")).contains("tbmq_connections_shed_total{listener=\"tls\",reason=\"limit\"} 1.0",
                "tbmq_connections_shed_total{listener=\"tls\",reason=\"rate\"} 0.0");
    }

    @Test
    void onlyLiveDeliveriesCountInTheLiveLatencyResendsInNeither() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        BrokerMetrics metrics = new BrokerMetrics(registry);
        metrics.messageOut(1, 10, 2_000, true);
        metrics.messageOut(1, 10, 60_000_000, false); // a minute-old message that waited for its offline device
        metrics.messageOut(1, 10, -1, true); // a resend
        String scrape = registry.scrape().replace(",}", "}");
        assertThat(scrape).contains("tbmq_live_delivery_latency_seconds_count 1", "tbmq_delivery_latency_seconds_count 2",
                "tbmq_messages_out_total{qos=\"1\"} 3.0");
        assertThat(scrape).contains("tbmq_live_delivery_latency_seconds_max 0.002", "tbmq_delivery_latency_seconds_max 60.0");
    }
}
