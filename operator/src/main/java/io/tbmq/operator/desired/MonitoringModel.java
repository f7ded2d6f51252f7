package io.tbmq.operator.desired;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.tbmq.operator.api.MonitoringSpec;
import io.tbmq.operator.api.TbmqCluster;

/**
 * The PodMonitor that has the Prometheus Operator scrape every broker pod's /q/metrics on its
 * management port. A generic object: the operator must run where the Prometheus Operator is not
 * installed, so it carries no model classes of that API.
 */
public final class MonitoringModel {
    public static final String GROUP = "monitoring.coreos.com";
    public static final String VERSION = "v1";
    public static final String KIND = "PodMonitor";
    public static final String PLURAL = "podmonitors";

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
}
