package io.tbmq.standin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Runs the Strimzi stand-in (a TEST DOUBLE) against a cluster until it is stopped:
 * {@code --kubeconfig FILE --kafka-image IMAGE [--namespaces a,b]} (every namespace by default).
 * {@code make cluster-up} starts it for the local cluster, where Strimzi's images cannot be had. It
 * also makes the local node's hostPath volumes writable for non-root pods ({@link HostPathVolumes}).
 */
public final class StrimziStandInMain {
    private StrimziStandInMain() {
    }

    public static void main(String[] args) throws Exception {
        String kubeconfig = null;
        String image = null;
        Set<String> namespaces = Set.of();
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--kubeconfig" -> kubeconfig = args[i + 1];
                case "--kafka-image" -> image = args[i + 1];
                case "--namespaces" -> namespaces = Set.of(args[i + 1].split(","));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (kubeconfig == null || image == null) {
            throw new IllegalArgumentException("usage: --kubeconfig FILE --kafka-image IMAGE [--namespaces a,b]");
        }
        KubernetesClient client = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(Files.readString(Path.of(kubeconfig))))
                .build();
        StrimziStandIn standIn = new StrimziStandIn(client, namespaces, new RealKafka(client, image));
        // The local node's volumes are hostPath directories on this host: writable by the pods' non-root users.
        HostPathVolumes volumes = new HostPathVolumes(client);
        System.out.println("Strimzi stand-in (a test double) watching " + (namespaces.isEmpty() ? "every namespace" : namespaces)
                + ", Kafka image " + image);
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            standIn.close();
            volumes.close();
            client.close();
            stop.countDown();
        }));
        stop.await();
    }
}
