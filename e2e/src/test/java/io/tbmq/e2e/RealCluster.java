package io.tbmq.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.operator.api.TbmqCluster;

/** The local real cluster of make cluster-up, as the e2e tests see it. */
final class RealCluster {
    private RealCluster() {
    }

    static Path kubeconfig() {
        String root = System.getenv().getOrDefault("REAL_NODE_ROOT", System.getProperty("user.home") + "/.cache/tbmq-real-node");
        return Path.of(root, "run", "admin.kubeconfig");
    }

    /** Every pod's log, the TbmqClusters and the events, into {@code dir}, before the cluster goes. */
    static void saveDiagnostics(KubernetesClient client, Path repo, String namespace, Path dir) {
        try {
            Files.createDirectories(dir);
            for (String ns : List.of(namespace, "tbmq-system")) {
                for (Pod p : client.pods().inNamespace(ns).list().getItems()) {
                    try {
                        Files.writeString(dir.resolve(p.getMetadata().getName() + ".log"),
                                client.pods().inNamespace(ns).withName(p.getMetadata().getName()).getLog());
                    } catch (RuntimeException e) {
                        // a pod without a log yet
                    }
                }
            }
            Files.writeString(dir.resolve("tbmq.yaml"), Serialization.asYaml(client.resources(TbmqCluster.class).inNamespace(namespace)
                    .list().getItems()));
            Files.writeString(dir.resolve("events.txt"), String.join("\n", client.v1().events().inNamespace(namespace).list().getItems()
                    .stream().map(e -> e.getLastTimestamp() + " " + e.getType() + " " + e.getReason() + " " + e.getInvolvedObject().getName()
                            + ": " + e.getMessage() + " (x" + e.getCount() + ")").toList()));
            Path standin = repo.resolve(".cluster/standin.log");
            if (Files.exists(standin)) {
                Files.copy(standin, dir.resolve("strimzi-standin.log"), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (Exception e) {
            System.err.println("could not save the cluster's diagnostics: " + e);
        }
    }
}
