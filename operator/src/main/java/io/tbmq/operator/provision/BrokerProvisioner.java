package io.tbmq.operator.provision;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Pod;
import io.tbmq.operator.desired.Labels;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqClusterStatus.Endpoint;
import io.tbmq.operator.desired.BrokerModel;
import io.tbmq.operator.desired.BrokerSettings;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.TopicPartitions;
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

    public Result reconcile(TbmqCluster owner, Plan plan, Names names, TopicPartitions partitions) {
        Map<String, String> settings = BrokerSettings.properties(owner, plan, names);
        ConfigMap config = BrokerModel.config(owner, names, settings);
        Map<String, String> liveSettings = BrokerSettings.live(owner, plan, partitions);
        ConfigMap live = BrokerModel.liveConfig(owner, names, liveSettings);
        int replicas = plan.brokers().value();
        StatefulSet desired = BrokerModel.statefulSet(owner, names, plan, config, redisPasswordVersion(owner, names));
        try {
            // Before the settings: running brokers read the live ones, and a broker restarted reads both.
            applier.checkPods(desired);
        } catch (Applier.PodsRefused e) {
            StatefulSet running = applier.current(desired);
            int ready = readyReplicas(running);
            // Desired: what the running StatefulSet asks for (none before the first write), not the plan it was refused.
            int written = running == null || running.getSpec().getReplicas() == null ? 0 : running.getSpec().getReplicas();
            return new Result(new ComponentStatus(CONDITION, false, Applier.PodsRefused.REASON, e.getMessage(), ready + "/" + written),
                    ready, written, endpoints(applier.current(BrokerModel.clientService(owner, names)), names));
        }
        // Each Event is recorded before the write it announces: an operator stopped between the two
        // writes it again on its next start (it still sees the change), never loses it.
        ConfigMap oldLive = applier.current(live);
        if (oldLive != null && oldLive.getData() != null && !oldLive.getData().equals(live.getData())) {
            events.normal(owner, "BrokerSettingsApplied", "live settings changed, applied by the running brokers without a restart: "
                    + String.join(", ", liveSettings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList()));
        }
        ConfigMap oldConfig = applier.current(config);
        if (oldConfig != null && oldConfig.getData() != null && !oldConfig.getData().equals(config.getData())) {
            events.normal(owner, "RollingBrokers", "broker settings changed (" + changed(oldConfig.getData(), config.getData())
                    + "); rolling the brokers one at a time");
        }
        applier.apply(config);
        applier.apply(live);
        applier.apply(BrokerModel.headless(owner, names));
        Service service = applier.apply(BrokerModel.clientService(owner, names));
        applier.apply(BrokerModel.disruptionBudget(owner, names));
        StatefulSet after = applier.apply(desired);
        int ready = readyReplicas(after);
        boolean rolledOut = rolledOut(after, replicas);
        String summary = ready + "/" + replicas;
        ComponentStatus status;
        if (rolledOut && ready == replicas) {
            status = new ComponentStatus(CONDITION, true, "BrokersReady", replicas + " brokers ready with the current settings", summary);
        } else {
            Optional<String> cause = cause(owner, names);
            status = new ComponentStatus(CONDITION, false, cause.isPresent() ? "BrokersNotReady" : "RollingOut", "brokers ready "
                    + summary + cause.map(c -> ": " + c).orElse(rolledOut ? "" : ", rolling out new settings"), summary);
        }
        return new Result(status, ready, replicas, endpoints(service, names));
    }

    private String redisPasswordVersion(TbmqCluster owner, Names names) {
        String name = BrokerModel.redisPasswordSecret(owner, names);
        if (name == null) {
            return null;
        }
        var secret = applier.client().secrets().inNamespace(names.namespace()).withName(name).get();
        if (secret == null && name.equals(names.redisPassword())) {
            // Gone since the Redis step read it: brokers rolled now would start with no Secret to read.
            throw new IllegalStateException("Secret " + name + ", the Redis password in force, is missing");
        }
        if (secret == null) {
            return null;
        }
        // The operator's copy: its generation, which only a new password raises. An external Redis's Secret: any edit.
        return name.equals(names.redisPassword()) ? Long.toString(RedisPasswordRotation.generation(secret))
                : secret.getMetadata().getResourceVersion();
    }

    /** Why brokers are not ready: what Kubernetes says of their pods, else what a running broker's readiness check says. */
    private Optional<String> cause(TbmqCluster owner, Names names) {
        List<Pod> pods = applier.watched().pods(names.namespace(), Labels.selector(owner.getMetadata().getName(), BrokerModel.COMPONENT));
        Optional<String> problem = PodDiagnosis.problem(pods);
        if (problem.isPresent()) {
            return problem;
        }
        for (Pod pod : pods) {
            if (!RedisProvisioner.isReady(pod) && pod.getStatus() != null && "Running".equals(pod.getStatus().getPhase())) {
                Optional<String> reason = PodDiagnosis.brokerReadiness(pod, BrokerModel.HTTP_PORT);
                if (reason.isPresent()) {
                    return reason;
                }
            }
        }
        return Optional.empty();
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
