package io.tbmq.operator.provision;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqClusterStatus.Endpoint;
import io.tbmq.operator.desired.BrokerModel;
import io.tbmq.operator.desired.BrokerSettings;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.sizing.Plan;

/** The brokers: settings ConfigMap, Services, PodDisruptionBudget and the StatefulSet. */
public final class BrokerProvisioner {
    public static final String CONDITION = "BrokersReady";
    private final Applier applier;
    private final EventRecorder events;

    public BrokerProvisioner(Applier applier, EventRecorder events) {
        this.applier = applier;
        this.events = events;
    }

    public record Result(ComponentStatus status, int ready, int desired, List<Endpoint> endpoints) {
    }

    public Result reconcile(TbmqCluster owner, Plan plan, Names names, int partitions) {
        Map<String, String> settings = BrokerSettings.properties(owner, plan, names, partitions);
        ConfigMap config = BrokerModel.config(owner, names, settings);
        ConfigMap oldConfig = applier.current(config);
        applier.apply(config);
        applier.apply(BrokerModel.headless(owner, names));
        Service service = applier.apply(BrokerModel.clientService(owner, names));
        applier.apply(BrokerModel.disruptionBudget(owner, names));
        StatefulSet desired = BrokerModel.statefulSet(owner, names, plan, config);
        StatefulSet after = applier.apply(desired);
        int replicas = plan.brokers().value();
        if (oldConfig != null && oldConfig.getData() != null && !oldConfig.getData().equals(config.getData())) {
            events.normal(owner, "RollingBrokers", "broker settings changed (" + changed(oldConfig.getData(), config.getData())
                    + "); rolling the brokers one at a time");
        }
        int ready = readyReplicas(after);
        boolean rolledOut = rolledOut(after, replicas);
        String summary = ready + "/" + replicas;
        ComponentStatus status = rolledOut && ready == replicas
                ? new ComponentStatus(CONDITION, true, "BrokersReady", replicas + " brokers ready with the current settings", summary)
                : new ComponentStatus(CONDITION, false, "RollingOut", "brokers ready " + summary
                        + (rolledOut ? "" : ", rolling out new settings"), summary);
        return new Result(status, ready, replicas, endpoints(service, names));
    }

    static int readyReplicas(StatefulSet s) {
        return s == null || s.getStatus() == null || s.getStatus().getReadyReplicas() == null ? 0 : s.getStatus().getReadyReplicas();
    }

    /** The StatefulSet controller has seen the latest spec and every pod runs the latest template. */
    static boolean rolledOut(StatefulSet s, int replicas) {
        if (s == null || s.getStatus() == null) {
            return false;
        }
        var st = s.getStatus();
        boolean observed = st.getObservedGeneration() != null && st.getObservedGeneration() >= s.getMetadata().getGeneration();
        boolean updated = st.getUpdatedReplicas() != null && st.getUpdatedReplicas() == replicas;
        boolean sameRevision = st.getUpdateRevision() == null || st.getUpdateRevision().equals(st.getCurrentRevision());
        return observed && updated && sameRevision && Objects.equals(st.getReplicas(), replicas);
    }

    private static String changed(Map<String, String> before, Map<String, String> after) {
        List<String> keys = new ArrayList<>();
        after.forEach((k, v) -> {
            if (!v.equals(before.get(k))) {
                keys.add(k + "=" + v);
            }
        });
        before.keySet().stream().filter(k -> !after.containsKey(k)).forEach(k -> keys.add(k + " removed"));
        return String.join(", ", keys);
    }

    private static List<Endpoint> endpoints(Service service, Names names) {
        List<Endpoint> out = new ArrayList<>();
        if (service == null || service.getSpec() == null || service.getSpec().getPorts() == null) {
            return out;
        }
        String external = null;
        if (service.getStatus() != null && service.getStatus().getLoadBalancer() != null
                && service.getStatus().getLoadBalancer().getIngress() != null
                && !service.getStatus().getLoadBalancer().getIngress().isEmpty()) {
            var ingress = service.getStatus().getLoadBalancer().getIngress().get(0);
            external = ingress.getHostname() != null ? ingress.getHostname() : ingress.getIp();
        }
        for (var port : service.getSpec().getPorts()) {
            out.add(new Endpoint(port.getName(), names.brokerService() + ":" + port.getPort()));
            if (external != null) {
                out.add(new Endpoint(port.getName() + "-external", external + ":" + port.getPort()));
            }
        }
        return out;
    }
}
