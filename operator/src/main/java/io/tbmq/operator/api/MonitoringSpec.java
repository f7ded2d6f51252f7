package io.tbmq.operator.api;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;

/** Scraping of the brokers' metrics by a Prometheus the Prometheus Operator runs. */
public class MonitoringSpec {

    @JsonPropertyDescription("Create a PodMonitor (Prometheus Operator, monitoring.coreos.com/v1) that scrapes every broker's "
            + "/q/metrics. Where the Prometheus Operator is not installed the MonitoringReady condition says so; nothing else "
            + "is affected.")
    private boolean enabled;

    @JsonPropertyDescription("With enabled, also create a PrometheusRule with the brokers' alerts (a broker down or cut off, Kafka "
            + "or Redis unreachable, failing PUBLISHes, consumer lag, full session queues, heap pressure; "
            + "docs/operations.md lists them), scoped to this cluster's brokers. Set false to keep alerts of your own.")
    @Default("true")
    private boolean alerts = true;

    @Pattern("^[0-9]+(ms|s|m|h)$")
    @JsonPropertyDescription("Scrape interval of the PodMonitor, a Prometheus duration such as 15s or 1m.")
    private String interval = "30s";

    @JsonPropertyDescription("Extra labels on the PodMonitor and the PrometheusRule, for a Prometheus whose podMonitorSelector and "
            + "ruleSelector pick them by label (kube-prometheus-stack selects release: <its Helm release name>).")
    private Map<String, String> labels = new LinkedHashMap<>();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isAlerts() {
        return alerts;
    }

    public void setAlerts(boolean alerts) {
        this.alerts = alerts;
    }

    public String getInterval() {
        return interval;
    }

    public void setInterval(String interval) {
        this.interval = interval;
    }

    public Map<String, String> getLabels() {
        return labels;
    }

    public void setLabels(Map<String, String> labels) {
        this.labels = labels;
    }
}
