package io.tbmq.operator.provision;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Reads of the objects the operator watches (its StatefulSets and their pods). In the running
 * operator they come from the informers' caches, so a reconcile costs the API server no GETs; a
 * write is handed back with {@link #written} so the next read sees it before the watch delivers it.
 */
public interface WatchedObjects {

    Optional<StatefulSet> statefulSet(String namespace, String name);

    Optional<Pod> pod(String namespace, String name);

    /** Pods in {@code namespace} carrying every label of {@code labels}. */
    List<Pod> pods(String namespace, Map<String, String> labels);

    /** The TbmqUsers whose spec.cluster names {@code cluster}. */
    List<io.tbmq.operator.api.TbmqUser> users(String namespace, String cluster);

    /** The password Secrets of {@code cluster}'s TbmqUsers. */
    List<io.fabric8.kubernetes.api.model.Secret> userSecrets(String namespace, String cluster);

    /** The operator just wrote {@code after} over {@code before} (null when it created it). */
    void written(HasMetadata before, HasMetadata after);

    /** Live reads through {@code client}: for tests that reconcile without the operator's informers. */
    static WatchedObjects live(KubernetesClient client) {
        return new WatchedObjects() {
            @Override
            public Optional<StatefulSet> statefulSet(String namespace, String name) {
                return Optional.ofNullable(client.apps().statefulSets().inNamespace(namespace).withName(name).get());
            }

            @Override
            public Optional<Pod> pod(String namespace, String name) {
                return Optional.ofNullable(client.pods().inNamespace(namespace).withName(name).get());
            }

            @Override
            public List<Pod> pods(String namespace, Map<String, String> labels) {
                return client.pods().inNamespace(namespace).withLabels(labels).list().getItems();
            }

            @Override
            public List<io.tbmq.operator.api.TbmqUser> users(String namespace, String cluster) {
                return client.resources(io.tbmq.operator.api.TbmqUser.class).inNamespace(namespace).list().getItems().stream()
                        .filter(u -> u.getSpec() != null && cluster.equals(u.getSpec().getCluster())).toList();
            }

            @Override
            public List<io.fabric8.kubernetes.api.model.Secret> userSecrets(String namespace, String cluster) {
                return client.secrets().inNamespace(namespace)
                        .withLabels(io.tbmq.operator.desired.Labels.selector(cluster, io.tbmq.operator.desired.UsersModel.USER_COMPONENT))
                        .list().getItems();
            }

            @Override
            public void written(HasMetadata before, HasMetadata after) {
            }
        };
    }
}
