package io.tbmq.e2e;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Where the node's CPU went during each step of a real-node run: how busy the machine was (its
 * mean, its busiest second, the seconds it had no core left), and who used it: each pod's cgroup
 * (cgroup v1 cpuacct under kubepods, as the real node's kubelet lays it out), the test's own clients
 * (this JVM), and the rest (control plane, kubelet, containerd). It tells a slow step on a saturated
 * two-core machine from a slow step on an idle one.
 */
final class MachineLoad implements AutoCloseable {
    private static final Path KUBEPODS = Path.of("/sys/fs/cgroup/cpuacct/kubepods");
    private static final double SATURATED = 0.95;

    private final KubernetesClient client;
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "machine-load");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, String> podNames = new HashMap<>();
    private final Map<String, Step> steps = new LinkedHashMap<>();
    private volatile String phase;
    private Sample last;

    /** What one step used; CPU in seconds of one core. */
    private static final class Step {
        double busy;
        double capacity;
        double busiestSecond;
        int saturatedSeconds;
        int seconds;
        double self;
        final Map<String, Double> pods = new HashMap<>();
    }

    private record Sample(long nanos, long busyTicks, long totalTicks, int cores, long selfNanos, Map<String, Long> podNanos) {
    }

    private MachineLoad(KubernetesClient client) {
        this.client = client;
    }

    /** Samples every second from now; null where the machine has no cgroup v1 kubepods hierarchy to read. */
    static MachineLoad start(KubernetesClient client) {
        if (!Files.isDirectory(KUBEPODS) || !Files.isReadable(Path.of("/proc/stat"))) {
            System.out.println("e2e real cluster: no " + KUBEPODS + ", the steps' CPU use is not recorded");
            return null;
        }
        MachineLoad load = new MachineLoad(client);
        load.sampler.scheduleAtFixedRate(load::sampleQuietly, 0, 1, TimeUnit.SECONDS);
        return load;
    }

    /** From now on, use is counted for {@code name}. */
    void phase(String name) {
        phase = name;
    }

    private void sampleQuietly() {
        try {
            sample();
        } catch (Exception | LinkageError e) {
            System.out.println("e2e real cluster: a CPU sample failed: " + e);
        }
    }

    private synchronized void sample() throws IOException {
        Sample now = read();
        Sample before = last;
        last = now;
        String name = phase;
        if (before == null || name == null) {
            return;
        }
        Step s = steps.computeIfAbsent(name, n -> new Step());
        double wall = (now.nanos - before.nanos) / 1e9;
        double ticks = now.totalTicks - before.totalTicks;
        if (ticks <= 0 || wall <= 0) {
            return;
        }
        double busyShare = (now.busyTicks - before.busyTicks) / ticks;
        s.busy += busyShare * wall * now.cores;
        s.capacity += wall * now.cores;
        s.busiestSecond = Math.max(s.busiestSecond, busyShare);
        s.saturatedSeconds += busyShare >= SATURATED ? 1 : 0;
        s.seconds++;
        s.self += (now.selfNanos - before.selfNanos) / 1e9;
        now.podNanos.forEach((uid, nanos) -> {
            long was = before.podNanos.getOrDefault(uid, 0L);
            if (nanos > was) {
                s.pods.merge(podName(uid), (nanos - was) / 1e9, Double::sum);
            }
        });
    }

    private static Sample read() throws IOException {
        long busy = 0;
        long total = 0;
        int cores = 0;
        for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
            if (line.startsWith("cpu ")) {
                // user nice system idle iowait irq softirq steal: idle and iowait are the idle ones.
                String[] f = line.trim().split("\\s+");
                for (int i = 1; i < Math.min(f.length, 9); i++) {
                    long v = Long.parseLong(f[i]);
                    total += v;
                    busy += i == 4 || i == 5 ? 0 : v;
                }
            } else if (line.matches("cpu\\d+ .*")) {
                cores++;
            }
        }
        Map<String, Long> pods = new HashMap<>();
        try (Stream<Path> podDirs = Stream.of(KUBEPODS, KUBEPODS.resolve("burstable"), KUBEPODS.resolve("besteffort"))
                .filter(Files::isDirectory).flatMap(MachineLoad::list)) {
            podDirs.filter(d -> d.getFileName().toString().startsWith("pod")).forEach(d -> {
                try {
                    pods.put(d.getFileName().toString().substring(3), Long.parseLong(Files.readString(d.resolve("cpuacct.usage")).trim()));
                } catch (IOException | NumberFormatException gone) {
                    // The pod ended between the listing and the read: its last second is not counted.
                }
            });
        }
        long self = ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class).getProcessCpuTime();
        return new Sample(System.nanoTime(), busy, total, Math.max(cores, 1), self, pods);
    }

    private static Stream<Path> list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(Files::isDirectory).toList().stream();
        } catch (IOException e) {
            return Stream.empty();
        }
    }

    /** A pod's name by its UID, asked of the API server the first time a UID is seen; Redis pods count as one. */
    private String podName(String uid) {
        String name = podNames.get(uid);
        if (name == null) {
            for (Pod p : client.pods().inAnyNamespace().list().getItems()) {
                podNames.put(p.getMetadata().getUid(), group(p.getMetadata().getName()));
            }
            name = podNames.computeIfAbsent(uid, u -> "a pod gone before it was named");
        }
        return name;
    }

    static String group(String podName) {
        return podName.replaceFirst("-redis-\\d+$", "-redis (every pod)")
                .replaceFirst("-[0-9a-f]{8,10}-[0-9a-z]{5}$", "");
    }

    /** One line per step: "busy 87% of 2 cores (busiest second 100%, 12 of 40 s saturated); dev-broker-0 30.1 s, ...". */
    synchronized Map<String, String> report() {
        Map<String, String> lines = new LinkedHashMap<>();
        steps.forEach((name, s) -> {
            if (s.seconds == 0) {
                return;
            }
            double pods = s.pods.values().stream().mapToDouble(Double::doubleValue).sum();
            List<String> users = s.pods.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                    .map(e -> e.getKey() + " " + oneDecimal(e.getValue()) + " s").collect(Collectors.toList());
            users.add("this test's clients " + oneDecimal(s.self) + " s");
            users.add("the rest (control plane, kubelet, containerd) " + oneDecimal(Math.max(0, s.busy - pods - s.self)) + " s");
            lines.put("CPU, " + name, String.format("busy %d%% of %d cores (busiest second %d%%, %d of %d s at %d%% or more); CPU seconds: %s",
                    Math.round(100 * s.busy / s.capacity), Math.round(s.capacity / s.seconds), Math.round(100 * s.busiestSecond),
                    s.saturatedSeconds, s.seconds, Math.round(100 * SATURATED), String.join(", ", users)));
        });
        return lines;
    }

    private static String oneDecimal(double v) {
        return String.format("%.1f", v);
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
