package io.tbmq.operator.provision;

import java.util.Objects;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.tbmq.operator.api.MonitoringSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.MonitoringModel;
import io.tbmq.operator.desired.Names;

/**
 * Keeps the brokers' PodMonitor and PrometheusRule as spec.monitoring asks. Monitoring never holds
 * up the cluster: a missing Prometheus Operator is a condition of its own (MonitoringReady false),
 * not a failure.
 */
public final class MonitoringProvisioner {
    public static final String CONDITION = "MonitoringReady";
    static final ResourceDefinitionContext POD_MONITORS = new ResourceDefinitionContext.Builder()
            .withGroup(MonitoringModel.GROUP).withVersion(MonitoringModel.VERSION).withKind(MonitoringModel.KIND)
            .withPlural(MonitoringModel.PLURAL).withNamespaced(true).build();
    static final ResourceDefinitionContext PROMETHEUS_RULES = new ResourceDefinitionContext.Builder()
            .withGroup(MonitoringModel.GROUP).withVersion(MonitoringModel.VERSION).withKind(MonitoringModel.RULE_KIND)
            .withPlural(MonitoringModel.RULE_PLURAL).withNamespaced(true).build();

    /** What MonitoringReady says; none when monitoring is off. */
    public record Result(boolean ready, String reason, String message) {
    }

    private final Applier applier;

    public MonitoringProvisioner(Applier applier) {
        this.applier = applier;
    }

    /**
     * Creates or updates the PodMonitor, and the PrometheusRule unless spec.monitoring.alerts is
     * false, when monitoring is on. What this operator may have created ({@code created}: there is a
     * MonitoringReady condition) and is no longer asked for is deleted; returns null when monitoring
     * is off. Objects of those names that this cluster does not own are never changed or deleted.
     * An API error is the condition's, not the reconcile's: monitoring never holds up the cluster.
     */
    public Result reconcile(TbmqCluster owner, Names names, boolean created) {
        try {
            return converge(owner, names, created);
        } catch (KubernetesClientException e) {
            return new Result(false, "MonitoringRejected", "the API server refused the brokers' monitoring objects: " + e.getMessage());
        }
    }

    private Result converge(TbmqCluster owner, Names names, boolean created) {
        MonitoringSpec spec = owner.getSpec().getMonitoring();
        String name = names.brokers();
        if (spec == null || !spec.isEnabled()) {
            if (created) {
                deleteOwn(POD_MONITORS, owner, name);
                deleteOwn(PROMETHEUS_RULES, owner, name);
            }
            return null;
        }
        if (!served(MonitoringModel.PLURAL)) {
            return new Result(false, "PrometheusOperatorNotInstalled", "spec.monitoring.enabled is true but this cluster has no "
                    + MonitoringModel.KIND + " API (" + MonitoringModel.GROUP + "/" + MonitoringModel.VERSION + "): install the "
                    + "Prometheus Operator, or set spec.monitoring.enabled to false. The brokers export /q/metrics either way");
        }
        if (takenByOther(POD_MONITORS, owner, name)) {
            return nameTaken(MonitoringModel.KIND, name, "spec.monitoring.enabled");
        }
        applier.apply(MonitoringModel.podMonitor(owner, names));
        String scraped = MonitoringModel.KIND + " " + name + " has every broker's /q/metrics scraped every " + spec.getInterval();
        if (!spec.isAlerts()) {
            if (created) {
                deleteOwn(PROMETHEUS_RULES, owner, name);
            }
            return new Result(true, "PodMonitorApplied", scraped + "; no alerts (spec.monitoring.alerts is false)");
        }
        if (!served(MonitoringModel.RULE_PLURAL)) {
            return new Result(false, "PrometheusRuleNotServed", scraped + ", but this cluster has no " + MonitoringModel.RULE_KIND
                    + " API for the brokers' alerts: install the Prometheus Operator's PrometheusRule CRD, or set "
                    + "spec.monitoring.alerts to false");
        }
        if (takenByOther(PROMETHEUS_RULES, owner, name)) {
            return nameTaken(MonitoringModel.RULE_KIND, name, "spec.monitoring.alerts");
        }
        applier.apply(MonitoringModel.prometheusRule(owner, names));
        return new Result(true, "MonitoringApplied", scraped + "; " + MonitoringModel.RULE_KIND + " " + name + " holds the "
                + MonitoringModel.alertCount() + " broker alerts");
    }

    private static Result nameTaken(String kind, String name, String field) {
        return new Result(false, "NameTaken", kind + " " + name + " exists and does not belong to this TbmqCluster: it is left "
                + "as it is. Rename or delete it, or set " + field + " to false");
    }

    /** An object of that name exists and this cluster does not own it (a team's own, say). */
    private boolean takenByOther(ResourceDefinitionContext type, TbmqCluster owner, String name) {
        GenericKubernetesResource existing = applier.client().genericKubernetesResources(type)
                .inNamespace(owner.getMetadata().getNamespace()).withName(name).get();
        return existing != null && !ownedBy(existing, owner);
    }

    private void deleteOwn(ResourceDefinitionContext type, TbmqCluster owner, String name) {
        if (!served(type.getPlural())) {
            return;
        }
        var resource = applier.client().genericKubernetesResources(type).inNamespace(owner.getMetadata().getNamespace()).withName(name);
        GenericKubernetesResource existing = resource.get();
        if (existing != null && ownedBy(existing, owner)) {
            resource.delete();
        }
    }

    private static boolean ownedBy(GenericKubernetesResource object, TbmqCluster owner) {
        return object.getMetadata().getOwnerReferences() != null && object.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> Objects.equals(r.getUid(), owner.getMetadata().getUid()));
    }

    /** Whether the API server serves {@code plural} of monitoring.coreos.com/v1 (API discovery, which every authenticated client may read). */
    private boolean served(String plural) {
        try {
            APIResourceList list = applier.client().getApiResources(MonitoringModel.GROUP + "/" + MonitoringModel.VERSION);
            return list != null && list.getResources().stream().anyMatch(r -> plural.equals(r.getName()));
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return false;
            }
            throw e;
        }
    }
}
