package io.tbmq.operator.desired;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.operator.api.MonitoringSpec;
import io.tbmq.operator.api.TbmqCluster;

/**
 * The PodMonitor that has the Prometheus Operator scrape every broker pod's /q/metrics on its
 * management port, and the PrometheusRule with the brokers' alerts. Generic objects: the operator
 * must run where the Prometheus Operator is not installed, so it carries no model classes of that API.
 */
public final class MonitoringModel {
    public static final String GROUP = "monitoring.coreos.com";
    public static final String VERSION = "v1";
    public static final String KIND = "PodMonitor";
    public static final String PLURAL = "podmonitors";
    public static final String RULE_KIND = "PrometheusRule";
    public static final String RULE_PLURAL = "prometheusrules";
    /** The job the alerting rules select (config/monitoring/tbmq-alerts.yaml), as a user's own Prometheus would name it. */
    static final String RULES_JOB = "job=\"tbmq\"";
    /** config/monitoring/tbmq-alerts.yaml, copied into the operator's jar by the build. */
    private static final String RULES = readRules();

    private MonitoringModel() {
    }

    public static GenericKubernetesResource podMonitor(TbmqCluster owner, Names names) {
        MonitoringSpec spec = owner.getSpec().getMonitoring();
        ObjectMeta meta = Owners.meta(owner, names.brokers(), "broker").build();
        meta.getLabels().putAll(spec.getLabels());
        return new GenericKubernetesResourceBuilder()
                .withApiVersion(GROUP + "/" + VERSION)
                .withKind(KIND)
                .withMetadata(meta)
                .addToAdditionalProperties("spec", Map.of(
                        "selector", Map.of("matchLabels", Labels.selector(owner.getMetadata().getName(), "broker")),
                        "podMetricsEndpoints", List.of(Map.of(
                                "port", BrokerModel.HTTP_PORT_NAME,
                                "path", "/q/metrics",
                                "interval", spec.getInterval()))))
                .build();
    }

    /**
     * The brokers' alerting rules, each selecting only this cluster's brokers: the job the
     * Prometheus Operator gives the targets of the PodMonitor above is NAMESPACE/NAME-broker.
     */
    public static GenericKubernetesResource prometheusRule(TbmqCluster owner, Names names) {
        ObjectMeta meta = Owners.meta(owner, names.brokers(), "broker").build();
        meta.getLabels().putAll(owner.getSpec().getMonitoring().getLabels());
        String job = "job=\"" + owner.getMetadata().getNamespace() + "/" + names.brokers() + "\"";
        Map<?, ?> rules = Serialization.unmarshal(RULES.replace(RULES_JOB, job), Map.class);
        return new GenericKubernetesResourceBuilder()
                .withApiVersion(GROUP + "/" + VERSION)
                .withKind(RULE_KIND)
                .withMetadata(meta)
                .addToAdditionalProperties("spec", Map.of("groups", rules.get("groups")))
                .build();
    }

    /** How many alerts the rules hold, for the condition's message. */
    public static int alertCount() {
        return (int) RULES.lines().filter(l -> l.strip().startsWith("- alert:")).count();
    }

    private static String readRules() {
        try (InputStream in = MonitoringModel.class.getResourceAsStream("tbmq-alerts.yaml")) {
            if (in == null) {
                throw new IllegalStateException("tbmq-alerts.yaml is missing from the operator's class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
