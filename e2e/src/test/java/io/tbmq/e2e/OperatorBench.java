package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.localstack.RedisNode;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.redis.RedisEndpoints;

/**
 * The operator's benchmark (make bench; not part of make test): with 1 and with 20 TbmqClusters in
 * one namespace on the real control plane, how long the operator takes to start, to bring every
 * cluster to Ready, and from a spec edit to every dependent updated and to Ready again; and the
 * heap it holds. Run: ./mvnw -pl e2e verify -Dit.test=OperatorBench (prints one line per run).
 */
class OperatorBench {
    static final String NS = "bench";

    @Test
    void oneAndTwentyClusters() throws Exception {
        Path repo = Path.of(System.getProperty("tbmq.repo", "..")).toAbsolutePath().normalize();
        Path work = Files.createDirectories(repo.resolve("e2e/target/bench-" + System.currentTimeMillis()));
        List<String> lines = new ArrayList<>();
        for (int clusters : new int[] { 1, 20 }) {
            lines.add(run(repo, work.resolve("n" + clusters), clusters));
        }
        lines.forEach(System.out::println);
        Files.write(repo.resolve("e2e/target/operator-bench.txt"), lines);
    }

    private static String run(Path repo, Path work, int clusters) throws Exception {
        Files.createDirectories(work);
        List<RedisNode> redis = new ArrayList<>();
        try (ControlPlane plane = ControlPlane.start(repo, work, 12); KubernetesClient client = plane.client()) {
            // Both CRDs: the operator starts only where every resource it reconciles is served.
            for (String crdFile : List.of("crds/tbmqclusters.tbmq.io-v1.yml", "crds/tbmqusers.tbmq.io-v1.yml")) {
                try (var crd = Files.newInputStream(repo.resolve(crdFile))) {
                    client.load(crd).serverSideApply();
                }
            }
            StrimziCrds.install(client);
            client.resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
            client.resource(new SecretBuilder().withNewMetadata().withName("dev-users").withNamespace(NS).endMetadata()
                    .addToStringData("credentials.yaml", "users: []\n").build()).serverSideApply();
            Thread.sleep(2000); // CRDs established
            Map<String, List<RedisNode>> byCluster = new HashMap<>();
            for (int c = 0; c < clusters; c++) {
                List<RedisNode> nodes = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    nodes.add(RedisNode.unjoinedClusterMember(work.resolve("redis-" + c + "-" + i)).start(Duration.ofSeconds(20)));
                }
                redis.addAll(nodes);
                byCluster.put("dev-" + c, nodes);
            }
            RedisEndpoints endpoints = (pod, ordinal) -> new io.tbmq.operator.redis.RedisNode(ordinal, "127.0.0.1",
                    byCluster.get(pod.getMetadata().getLabels().get("app.kubernetes.io/instance")).get(ordinal).port());
            TbmqCluster sample = Serialization.unmarshal(Files.newInputStream(repo.resolve("config/samples/tbmq-dev.yaml")),
                    TbmqCluster.class);
            for (int c = 0; c < clusters; c++) {
                sample.getMetadata().setName("dev-" + c);
                sample.getMetadata().setNamespace(NS);
                client.resource(sample).create();
            }
            try (io.tbmq.standin.StrimziStandIn strimzi = new io.tbmq.standin.StrimziStandIn(client, NS)) {
                long heapBefore = usedHeapAfterGc();
                long t0 = System.nanoTime();
                InProcessOperator operator = new InProcessOperator(client, NS, endpoints);
                long started = System.nanoTime();
                try (operator) {
                    long[] toReady = awaitAll(client, clusters, t0, c -> isReady(c, 1));
                    long heapAfter = usedHeapAfterGc();

                    long t1 = System.nanoTime();
                    for (int c = 0; c < clusters; c++) {
                        client.resources(TbmqCluster.class).inNamespace(NS).withName("dev-" + c).edit(x -> {
                            x.getSpec().setTargetThroughput(150_000);
                            return x;
                        });
                    }
                    long[] toApplied = awaitAll(client, clusters, t1, c -> batchApplied(client, c, "113"));
                    long[] toReadyAgain = awaitAll(client, clusters, t1, c -> isReady(c, 2));
                    operator.close();
                    String process = operatorProcess(repo, plane, work);
                    return String.format(Locale.ROOT,
                            "clusters=%d in_process_start_ms=%d ready_after_start_ms(median/max)=%d/%d "
                                    + "edit_to_dependents_ms=%d/%d edit_to_ready_ms=%d/%d heap_delta_mib=%.1f %s",
                            clusters, (started - t0) / 1_000_000, median(toReady), max(toReady), median(toApplied),
                            max(toApplied), median(toReadyAgain), max(toReadyAgain),
                            (heapAfter - heapBefore) / 1048576.0, process);
                }
            }
        } finally {
            redis.forEach(RedisNode::stop);
        }
    }

    /**
     * The packaged operator (operator/target/quarkus-app) as its own JVM against the same API server and
     * clusters: time to Quarkus' "started" line and resident memory after 20 s of reconciling. Its Redis
     * pods have kwok's fake IPs, so it reports them unreachable; the point is its own footprint.
     */
    private static String operatorProcess(Path repo, ControlPlane plane, Path work) throws Exception {
        Path jar = repo.resolve("operator/target/quarkus-app/quarkus-run.jar");
        Path log = work.resolve("operator.log");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
                jar.toString()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("KUBECONFIG", plane.kubeconfig().toString());
        pb.environment().put("QUARKUS_OPERATOR_SDK_CONTROLLERS_TBMQCLUSTER_NAMESPACES", NS);
        pb.environment().put("QUARKUS_HTTP_PORT", Integer.toString(io.tbmq.localstack.Ports.free()));
        long t0 = System.nanoTime();
        Process p = pb.start();
        try {
            long startedMs = -1;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (startedMs < 0 && System.nanoTime() < deadline && p.isAlive()) {
                if (Files.exists(log) && Files.readString(log).contains(" started in ")) {
                    startedMs = (System.nanoTime() - t0) / 1_000_000;
                }
                Thread.sleep(20);
            }
            assertThat(startedMs).as("operator process started, see " + log).isPositive();
            Thread.sleep(20_000);
            long rssKib = Files.readAllLines(Path.of("/proc/" + p.pid() + "/status")).stream()
                    .filter(l -> l.startsWith("VmRSS:")).map(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).findFirst()
                    .orElse(-1L);
            return String.format(Locale.ROOT, "process_start_ms=%d process_rss_mib=%.0f", startedMs, rssKib / 1024.0);
        } finally {
            p.destroy();
            if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    private static boolean isReady(TbmqCluster c, long generation) {
        return c.getStatus() != null && c.getStatus().getObservedGeneration() != null
                && c.getStatus().getObservedGeneration() == generation
                && c.getStatus().getConditions().stream().anyMatch(x -> "Ready".equals(x.getType()) && "True".equals(x.getStatus()));
    }

    /** The new Lettuce batch size is in the broker settings and in the StatefulSet's pod template hash. */
    private static boolean batchApplied(KubernetesClient client, TbmqCluster c, String batch) {
        var cm = client.configMaps().inNamespace(NS).withName(c.getMetadata().getName() + "-broker-config").get();
        return cm != null && batch.equals(cm.getData().get("TBMQ_REDIS_LETTUCE_BATCH_SIZE"))
                && client.apps().statefulSets().inNamespace(NS).withName(c.getMetadata().getName() + "-broker").get()
                        .getMetadata().getGeneration() > 1;
    }

    private static long[] awaitAll(KubernetesClient client, int clusters, long t0, Predicate<TbmqCluster> done)
            throws InterruptedException {
        long[] at = new long[clusters];
        Arrays.fill(at, -1);
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        int remaining = clusters;
        while (remaining > 0) {
            assertThat(System.nanoTime()).as("all clusters done within 5 minutes").isLessThan(deadline);
            for (int c = 0; c < clusters; c++) {
                if (at[c] < 0) {
                    TbmqCluster tc = client.resources(TbmqCluster.class).inNamespace(NS).withName("dev-" + c).get();
                    if (tc != null && done.test(tc)) {
                        at[c] = (System.nanoTime() - t0) / 1_000_000;
                        remaining--;
                    }
                }
            }
            Thread.sleep(50);
        }
        return at;
    }

    private static long usedHeapAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long median(long[] values) {
        long[] s = values.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static long max(long[] values) {
        return Arrays.stream(values).max().orElse(0);
    }
}
