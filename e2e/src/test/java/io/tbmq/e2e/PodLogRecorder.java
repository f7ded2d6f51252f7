package io.tbmq.e2e;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.LogWatch;

/**
 * Follows the log of every pod of some namespaces into {@code <pod>-<uid prefix>.log} while a test
 * runs: a pod the test deletes takes its log with it, and that log is the one a loss is looked for in.
 */
final class PodLogRecorder implements AutoCloseable {
    private final KubernetesClient client;
    private final List<String> namespaces;
    private final Path dir;
    private final Set<String> followed = new HashSet<>();
    private final List<LogWatch> watches = new ArrayList<>();
    private final List<OutputStream> files = new ArrayList<>();
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pod-log-recorder");
        t.setDaemon(true);
        return t;
    });

    PodLogRecorder(KubernetesClient client, List<String> namespaces, Path dir) throws IOException {
        this.client = client;
        this.namespaces = namespaces;
        this.dir = dir;
        // A run's logs only: PartitionMoves reads every file here, and a local rerun would mix two runs.
        if (Files.isDirectory(dir)) {
            try (var old = Files.list(dir)) {
                for (Path f : old.toList()) {
                    Files.delete(f);
                }
            }
        }
        Files.createDirectories(dir);
        poller.scheduleWithFixedDelay(this::followNewPods, 0, 2, TimeUnit.SECONDS);
    }

    private synchronized void followNewPods() {
        try {
            for (String ns : namespaces) {
                for (Pod p : client.pods().inNamespace(ns).list().getItems()) {
                    String uid = p.getMetadata().getUid();
                    var running = p.getStatus() == null || p.getStatus().getContainerStatuses() == null ? null
                            : p.getStatus().getContainerStatuses().stream().filter(c -> c.getState() != null && c.getState().getRunning() != null)
                                    .findFirst().orElse(null);
                    // A restarted container is followed anew: its predecessor's stream ended with its last words.
                    String instance = uid.substring(0, 8) + (running == null || running.getRestartCount() == 0 ? "" : "-restart-" + running.getRestartCount());
                    if (running == null || !followed.add(instance)) {
                        continue;
                    }
                    OutputStream out = Files.newOutputStream(dir.resolve(p.getMetadata().getName() + "-" + instance + ".log"));
                    files.add(out);
                    watches.add(client.pods().inNamespace(ns).withName(p.getMetadata().getName()).watchLog(out));
                }
            }
        } catch (RuntimeException | IOException e) {
            // the API server restarting or a pod going away between list and watch: the next round tries again
        }
    }

    @Override
    public synchronized void close() {
        poller.shutdownNow();
        watches.forEach(LogWatch::close);
        for (OutputStream out : files) {
            try {
                out.close();
            } catch (IOException e) {
                // nothing more to keep
            }
        }
    }
}
