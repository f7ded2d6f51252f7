package io.tbmq.operator.api;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Pattern;

/** Scraping of the brokers' metrics by a Prometheus the Prometheus Operator runs. */
public class MonitoringSpec {

    @JsonPropertyDescription("Create a PodMonitor (Prometheus Operator, monitoring.coreos.com/v1) that scrapes every broker's "
            + "/q/metrics. Where the Prometheus Operator is not installed the MonitoringReady condition says so; nothing else "
            + "is affected.")
    private boolean enabled;

    @Pattern("^[0-9]+(ms|s|m|h)$")
    @JsonPropertyDescription("Scrape interval of the PodMonitor, a Prometheus duration such as 15s or 1m.")
    private String interval = "30s";

    @JsonPropertyDescription("Extra labels on the PodMonitor, for a Prometheus whose podMonitorSelector picks monitors by label "
            + "(kube-prometheus-stack selects release: <its Helm release name>).")
    private Map<String, String> labels = new LinkedHashMap<>();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
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
