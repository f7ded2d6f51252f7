package io.tbmq.standin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Makes the local node's hostPath volumes writable by the pods' users (a TEST DOUBLE for what a
 * storage driver does with a pod's fsGroup). The controller-manager's hostPath provisioner creates
 * each volume's directory as root with mode 0750, and Kubernetes applies no fsGroup to hostPath
 * volumes, so a pod running as a non-root user (restricted Pod Security) could not write its own
 * volume. Must run on the node's host as root.
 */
public final class HostPathVolumes implements AutoCloseable {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hostpath-volumes");
        t.setDaemon(true);
        return t;
    });

    public HostPathVolumes(KubernetesClient client) {
        timer.scheduleWithFixedDelay(() -> {
            try {
                for (PersistentVolume pv : client.persistentVolumes().list().getItems()) {
                    if (pv.getSpec().getHostPath() == null) {
                        continue;
                    }
                    Path dir = Path.of(pv.getSpec().getHostPath().getPath());
                    if (Files.isDirectory(dir) && !PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)).equals("rwxrwxrwx")) {
                        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
                    }
                }
            } catch (Exception e) {
                // the API server restarting, a volume going away: next round
            }
        }, 0, 500, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
