package io.tbmq.operator.desired;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.tbmq.operator.api.TbmqCluster;

/** The PrometheusRule a cluster gets: the rules users load themselves, scoped to this cluster's brokers. */
class MonitoringModelTest {

    @Test
    @SuppressWarnings("unchecked")
    void theAlertsSelectOnlyThisClustersBrokers() throws IOException {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        c.getSpec().getMonitoring().setEnabled(true);
        c.getSpec().getMonitoring().getLabels().put("release", "prometheus");
        Names names = new Names(c.getMetadata().getName(), "iot");

        var rule = MonitoringModel.prometheusRule(c, names);
        assertThat(rule.getKind()).isEqualTo("PrometheusRule");
        assertThat(rule.getMetadata().getName()).isEqualTo(names.brokers());
        assertThat(rule.getMetadata().getLabels()).containsEntry("release", "prometheus");
        var spec = (Map<String, Object>) rule.getAdditionalProperties().get("spec");
        var groups = (List<Map<String, Object>>) spec.get("groups");
        var alerts = groups.stream().flatMap(g -> ((List<Map<String, Object>>) g.get("rules")).stream()).toList();

        String file = Files.readString(Path.of("..", "config", "monitoring", "tbmq-alerts.yaml"));
        assertThat(alerts).as("every alert of config/monitoring/tbmq-alerts.yaml").hasSize(MonitoringModel.alertCount())
                .hasSize(file.split("\n\\s*- alert: ", -1).length - 1);
        for (Map<String, Object> alert : alerts) {
            String expr = (String) alert.get("expr");
            assertThat(expr).as((String) alert.get("alert")).contains("job=\"iot/" + names.brokers() + "\"")
                    .doesNotContain(MonitoringModel.RULES_JOB);
            assertThat((Map<String, String>) alert.get("annotations")).containsKeys("summary", "description");
        }
        // The rules of two clusters never select each other's brokers.
        var other = MonitoringModel.prometheusRule(Samples.load("tbmq-p2p-200k.yaml", "plant-2"), new Names(c.getMetadata().getName(),
                "plant-2"));
        assertThat(other.getAdditionalProperties().get("spec").toString()).contains("job=\"plant-2/").doesNotContain("job=\"iot/");
    }
}
