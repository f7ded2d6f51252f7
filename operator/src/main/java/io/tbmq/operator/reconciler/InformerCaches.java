package io.tbmq.operator.reconciler;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.provision.WatchedObjects;

/** The operator's StatefulSets and pods as its informers hold them (see prepareEventSources). */
final class InformerCaches implements WatchedObjects {
    private final InformerEventSource<StatefulSet, TbmqCluster> statefulSets;
    private final InformerEventSource<Pod, TbmqCluster> pods;
    private final InformerEventSource<io.tbmq.operator.api.TbmqUser, TbmqCluster> users;
    private final InformerEventSource<io.fabric8.kubernetes.api.model.Secret, TbmqCluster> userSecrets;

    @SuppressWarnings("unchecked")
    InformerCaches(Context<TbmqCluster> context) {
        this.statefulSets = (InformerEventSource<StatefulSet, TbmqCluster>) context.eventSourceRetriever()
                .getEventSourceFor(StatefulSet.class, TbmqClusterReconciler.STATEFUL_SETS);
        this.pods = (InformerEventSource<Pod, TbmqCluster>) context.eventSourceRetriever()
                .getEventSourceFor(Pod.class, TbmqClusterReconciler.PODS);
        this.users = (InformerEventSource<io.tbmq.operator.api.TbmqUser, TbmqCluster>) context.eventSourceRetriever()
                .getEventSourceFor(io.tbmq.operator.api.TbmqUser.class, TbmqClusterReconciler.USERS);
        this.userSecrets = (InformerEventSource<io.fabric8.kubernetes.api.model.Secret, TbmqCluster>) context.eventSourceRetriever()
                .getEventSourceFor(io.fabric8.kubernetes.api.model.Secret.class, TbmqClusterReconciler.USER_SECRETS);
    }

    @Override
    public Optional<StatefulSet> statefulSet(String namespace, String name) {
        return statefulSets.get(new ResourceID(name, namespace));
    }

    @Override
    public Optional<Pod> pod(String namespace, String name) {
        return pods.get(new ResourceID(name, namespace));
    }

    @Override
    public List<Pod> pods(String namespace, Map<String, String> labels) {
        return pods.list(namespace, pod -> pod.getMetadata().getLabels() != null
                && pod.getMetadata().getLabels().entrySet().containsAll(labels.entrySet())).toList();
    }

    @Override
    public List<io.tbmq.operator.api.TbmqUser> users(String namespace, String cluster) {
        return users.list(namespace, u -> u.getSpec() != null && cluster.equals(u.getSpec().getCluster())).toList();
    }

    @Override
    public List<io.fabric8.kubernetes.api.model.Secret> userSecrets(String namespace, String cluster) {
        return userSecrets.list(namespace, s -> s.getMetadata().getLabels() != null
                && cluster.equals(s.getMetadata().getLabels().get(io.tbmq.operator.desired.Labels.INSTANCE))).toList();
    }

    /**
     * Until the watch delivers it, the written version is served from JOSDK's temporary cache (kept
     * only while the informer still holds exactly {@code before}, so it never hides a newer one).
     */
    @Override
    public void written(HasMetadata before, HasMetadata after) {
        if (!(after instanceof StatefulSet written)) {
            return;
        }
        ResourceID id = ResourceID.fromResource(written);
        if (before == null) {
            statefulSets.handleRecentResourceCreate(id, written);
        } else {
            statefulSets.handleRecentResourceUpdate(id, written, (StatefulSet) before);
        }
    }
}
