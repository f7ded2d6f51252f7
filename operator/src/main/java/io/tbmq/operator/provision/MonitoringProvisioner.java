package io.tbmq.operator.provision;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.tbmq.operator.api.MonitoringSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.MonitoringModel;
import io.tbmq.operator.desired.Names;

/**
 * Keeps the brokers' PodMonitor as spec.monitoring asks. Monitoring never holds up the cluster: a
 * missing Prometheus Operator is a condition of its own (MonitoringReady false), not a failure.
 */
public final class MonitoringProvisioner {
    public static final String CONDITION = "MonitoringReady";
    static final ResourceDefinitionContext POD_MONITORS = new ResourceDefinitionContext.Builder()
            .withGroup(MonitoringModel.GROUP).withVersion(MonitoringModel.VERSION).withKind(MonitoringModel.KIND)
            .withPlural(MonitoringModel.PLURAL).withNamespaced(true).build();

    /** What MonitoringReady says; none when monitoring is off. */
    public record Result(boolean ready, String reason, String message) {
    }

    private final Applier applier;

    public MonitoringProvisioner(Applier applier) {
        this.applier = applier;
    }

    /**
     * Creates or updates the PodMonitor when monitoring is on. When it is off, a PodMonitor this
     * operator created ({@code created}: MonitoringReady was true) is deleted; returns null then.
     */
    public Result reconcile(TbmqCluster owner, Names names, boolean created) {
        MonitoringSpec spec = owner.getSpec().getMonitoring();
        if (spec == null || !spec.isEnabled()) {
            if (created && installed()) {
                applier.client().genericKubernetesResources(POD_MONITORS).inNamespace(owner.getMetadata().getNamespace())
                        .withName(names.brokers()).delete();
            }
            return null;
        }
        if (!installed()) {
            return new Result(false, "PrometheusOperatorNotInstalled", "spec.monitoring.enabled is true but this cluster has no "
                    + MonitoringModel.KIND + " API (" + MonitoringModel.GROUP + "/" + MonitoringModel.VERSION + "): install the "
                    + "Prometheus Operator, or set spec.monitoring.enabled to false. The brokers export /q/metrics either way");
        }
        GenericKubernetesResource monitor = MonitoringModel.podMonitor(owner, names);
        applier.apply(monitor);
        return new Result(true, "PodMonitorApplied", MonitoringModel.KIND + " " + names.brokers() + " has every broker's /q/metrics "
                + "scraped every " + spec.getInterval());
    }

    /** Whether the API server serves PodMonitors (API discovery, which every authenticated client may read). */
    private boolean installed() {
        try {
            APIResourceList list = applier.client().getApiResources(MonitoringModel.GROUP + "/" + MonitoringModel.VERSION);
            return list != null && list.getResources().stream().anyMatch(r -> MonitoringModel.PLURAL.equals(r.getName()));
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return false;
            }
            throw e;
        }
    }
}
