package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.loadgen.ContinuousTraffic;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.provision.PodDiagnosis;

/**
 * The whole product on a real one-node Kubernetes (real pods: containerd, runc, CNI, kube-proxy):
 * docs/install.md's "Try it on one machine" run as written, then, with continuous traffic through
 * the broker Service the whole time (100 QoS 1 and 20 QoS 2 pairs of persistent subscribers, 10
 * msg/s per publisher), a scale up and down by spec edit, a broker pod deleted, a Redis pod
 * deleted, every Redis pod deleted at once, and the operator pod deleted in the middle of a scale.
 * Afterwards no acknowledged message may be missing and no message may have arrived twice without
 * DUP; the longest pause a pair saw in each step (counted in the step it began in) goes to e2e/target/real-cluster-e2e.txt
 * (docs/reliability.md). Kafka comes from the Strimzi stand-in, a test double (docs/install.md).
 * A scale edit must not cut a pair off: every pair must have had a message within the 5 s that
 * follow the cluster's Ready (run 22 of docs/reliability.md's table had a pair cut off by a
 * scale-down into the next step), and in make test no pair may pause longer than 30 s during one.
 * On this two-core machine every second of a scale edit runs at full CPU (the report's "CPU" lines),
 * and a pair paused 16.8 s in a scale-up that cut nothing off: the bound catches a stall, not the
 * machine's speed. The target is 5 s, reported per run as the pairs over it; {@code make
 * test-real-cluster} runs this test alone and holds it to the target ({@code
 * -Dtbmq.e2e.scale-pause-limit-ms=5000}). A speed target, like any, is measured rather than asserted
 * in the suite every landing needs.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealClusterFaultsE2E {
    static final String NS = "default";
    static final String NAME = "dev";
    static final Duration READY = Duration.ofMinutes(10);
    /** The target: a scale edit pauses no pair longer than this (the brokers pick partitions and batch sizes up live). */
    static final long SCALE_PAUSE_MILLIS = 5_000;
    /** What the test holds a scale edit to: longer, a pair stalled rather than waited for a CPU. */
    static final long SCALE_PAUSE_LIMIT_MILLIS = Long.getLong("tbmq.e2e.scale-pause-limit-ms", 30_000);
    /** Up to nine Redis pods, each met at most once per move, with room for a meet that had to be repeated. */
    static final int MEETS_PER_STEP = 10;

    static Path repo;
    static KubernetesClient client;
    static String password;
    static String brokerHost;
    static final List<ContinuousTraffic> traffic = new ArrayList<>();
    static final Map<String, String> report = new LinkedHashMap<>();
    static Instant t0;
    static PodLogRecorder logs;
    static MachineLoad load;
    /** When the step under way last saw the cluster Ready ({@link System#nanoTime()}), or null. */
    static Long readyAt;
    /** Per step that awaited Ready: the pairs with no message from before Ready until the step ended (5 s after it). */
    static final Map<String, List<String>> silentAfterReady = new LinkedHashMap<>();
    /** CLUSTER MEETs the operator recorded in each step. */
    static final Map<String, Integer> redisMeets = new LinkedHashMap<>();
    /** When each step began, UTC, in the pods' log clock. */
    static final Map<String, java.time.LocalTime> stepStarts = new LinkedHashMap<>();

    @BeforeAll
    static void tryItOnOneMachine() throws Exception {
        repo = Path.of(System.getProperty("tbmq.repo", "..")).toAbsolutePath().normalize();
        t0 = Instant.now();
        // The documented commands as a user runs them, from a shell without KUBECONFIG.
        List<String> lines = Docs.codeBlock(repo.resolve("docs/install.md"), "## Try it on one machine");
        assertThat(lines.get(0)).isEqualTo("make cluster-up && make deploy && kubectl apply -f config/samples/tbmq-dev.yaml");
        assertThat(lines.get(lines.size() - 1)).isEqualTo("make cluster-down");
        String out = Docs.run(repo, lines.subList(0, lines.size() - 1), Duration.ofMinutes(45));
        assertThat(out).as("the message went through the broker Service to a subscriber").contains("demo/hello hello from a real pod");
        System.out.printf("e2e: documented commands, to a message through a Ready cluster, in %d s%n",
                Duration.between(t0, Instant.now()).toSeconds());
        client = ControlPlane.userClient(Config.fromKubeconfig(Files.readString(RealCluster.kubeconfig())));
        password = Files.readString(repo.resolve(".cluster/dev-password")).trim();
        brokerHost = client.services().inNamespace(NS).withName(NAME + "-broker").get().getSpec().getClusterIP();
        logs = new PodLogRecorder(client, List.of(NS, "tbmq-system"), repo.resolve("e2e/target/real-cluster/pod-logs"));
    }

    @AfterAll
    static void cleanUp() throws Exception {
        traffic.forEach(ContinuousTraffic::close);
        if (load != null) {
            load.close();
        }
        if (logs != null) {
            logs.close();
            report.putAll(PartitionMoves.report(repo.resolve("e2e/target/real-cluster/pod-logs"), NAME + "-broker-"));
            report.putAll(ConnectTimeouts.report(repo.resolve("e2e/target/real-cluster/pod-logs"), NAME + "-broker-", stepStarts));
        }
        Files.write(repo.resolve("e2e/target/real-cluster-e2e.txt"), report.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                .toList());
        if (client != null) {
            RealCluster.saveDiagnostics(client, repo, NS, repo.resolve("e2e/target/real-cluster"));
            client.close();
        }
        String down = Docs.run(repo, List.of("make cluster-down"), Duration.ofMinutes(5));
        System.out.println(down);
        assertThat(Files.exists(repo.resolve(".cluster"))).as("cluster-down removed its state").isFalse();
    }

    @Test
    @Order(2)
    void continuousTrafficThroughTheServiceLosesNothingWhileTheClusterIsScaledAndBroken() throws Exception {
        traffic.add(ContinuousTraffic.start(new ContinuousTraffic.Settings(brokerHost, 1883, "dev", password, 100, 1, 10, "q1")));
        traffic.add(ContinuousTraffic.start(new ContinuousTraffic.Settings(brokerHost, 1883, "dev", password, 20, 2, 10, "q2")));
        load = MachineLoad.start(client);
        step("steady traffic", () -> sleep(10));

        String brokerUid = pod(NAME + "-broker-0").getMetadata().getUid();
        step("scale up by spec edit: 5k -> 800k msg/s, 2 brokers", () -> {
            TbmqCluster c = edit(x -> {
                x.getSpec().setTargetThroughput(800_000);
                x.getSpec().getOverrides().setBrokers(2);
            });
            awaitReady(c.getMetadata().getGeneration());
            sleep(5);
        });
        assertThat(client.apps().statefulSets().inNamespace(NS).withName(NAME + "-redis").get().getSpec().getReplicas()).isEqualTo(9);
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).withName(NAME + "-msg-all").get().getSpec().getPartitions())
                .isEqualTo(16);
        assertThat(pod(NAME + "-broker-0").getMetadata().getUid()).as("the running broker was not restarted by the scale")
                .isEqualTo(brokerUid);
        var brokerStatus = pod(NAME + "-broker-0").getStatus().getContainerStatuses().get(0);
        assertThat(brokerStatus.getRestartCount()).as("broker-0 restarts (last end: %s; its last lines: %s)",
                brokerStatus.getLastState() == null ? null : Serialization.asJson(brokerStatus.getLastState().getTerminated()),
                brokerStatus.getRestartCount() == 0 ? "" : previousLog(NAME + "-broker-0")).isZero();

        step("scale down by spec edit: 800k -> 5k msg/s, 1 broker", () -> {
            TbmqCluster c = edit(x -> {
                x.getSpec().setTargetThroughput(5_000);
                x.getSpec().getOverrides().setBrokers(null);
            });
            awaitReady(c.getMetadata().getGeneration());
            sleep(5);
        });
        assertThat(client.apps().statefulSets().inNamespace(NS).withName(NAME + "-redis").get().getSpec().getReplicas()).isEqualTo(3);

        step("one broker pod deleted", () -> {
            deleteAndAwaitReplacement(NAME + "-broker-0");
            sleep(5);
        });
        step("one Redis pod deleted", () -> {
            deleteAndAwaitReplacement(NAME + "-redis-1");
            sleep(5);
        });
        step("every Redis pod deleted at once", () -> {
            Set<String> before = client.pods().inNamespace(NS).withLabel("app.kubernetes.io/component", "redis").list()
                    .getItems().stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
            client.pods().inNamespace(NS).withLabel("app.kubernetes.io/component", "redis").delete();
            // Deleting pods leaves the generation as it was, so the Ready from the step before would pass at
            // once: first every Redis pod replaced and ready (run 53: one took 28 s, its volume and then its AOF).
            int replicas = client.apps().statefulSets().inNamespace(NS).withName(NAME + "-redis").get().getSpec().getReplicas();
            await("every Redis pod replaced and ready", () -> {
                List<Pod> now = client.pods().inNamespace(NS).withLabel("app.kubernetes.io/component", "redis").list().getItems();
                return now.size() == replicas && now.stream().noneMatch(p -> before.contains(p.getMetadata().getUid()))
                        && now.stream().allMatch(p -> p.getStatus().getConditions().stream()
                                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())));
            }, Duration.ofMinutes(3));
            awaitReady(get().getMetadata().getGeneration());
            sleep(5);
        });
        // The dev sample names no Redis password: the operator generated one. A Secret named now changes it
        // under traffic: both accepted while the broker restarts with the new one, then only the new one.
        String generated = redisPassword();
        String chosen = "e2e-" + java.util.UUID.randomUUID();
        step("Redis password changed by naming a Secret", () -> {
            client.resource(new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata().withName(NAME + "-redis-auth")
                    .withNamespace(NS).endMetadata().addToStringData("password", chosen).build()).create();
            TbmqCluster c = edit(x -> x.getSpec().getRedis().setPasswordSecret(NAME + "-redis-auth"));
            await("the old Redis password refused", () -> chosen.equals(redisPassword()) && !client.secrets().inNamespace(NS)
                    .withName(NAME + "-redis-password").get().getData().containsKey("previous"), READY);
            awaitReady(c.getMetadata().getGeneration());
            sleep(5);
        });
        String redisIp = pod(NAME + "-redis-0").getStatus().getPodIP();
        assertThat(redisAuth(redisIp, generated)).as("the generated password, after the change").startsWith("-WRONGPASS");
        assertThat(redisAuth(redisIp, chosen)).as("the chosen one").isEqualTo("+OK");

        step("the operator pod deleted in the middle of a scale", () -> {
            TbmqCluster c = edit(x -> {
                x.getSpec().setTargetThroughput(800_000);
                x.getSpec().getOverrides().setBrokers(2);
            });
            await("the Redis StatefulSet grown", () -> client.apps().statefulSets().inNamespace(NS).withName(NAME + "-redis").get()
                    .getSpec().getReplicas() == 9, READY);
            client.pods().inNamespace("tbmq-system").delete();
            awaitReady(c.getMetadata().getGeneration());
            sleep(5);
        });

        if (load != null) {
            load.phase(null);
        }
        List<ContinuousTraffic.PairReport> pairs = new ArrayList<>();
        for (ContinuousTraffic t : traffic) {
            pairs.addAll(t.finish(Duration.ofMinutes(3)));
        }
        traffic.clear();
        long acked = pairs.stream().mapToLong(ContinuousTraffic.PairReport::acked).sum();
        long lost = pairs.stream().mapToLong(ContinuousTraffic.PairReport::lost).sum();
        long duplicates = pairs.stream().mapToLong(ContinuousTraffic.PairReport::duplicates).sum();
        long withoutDup = pairs.stream().mapToLong(ContinuousTraffic.PairReport::duplicatesWithoutDup).sum();
        long reordered = pairs.stream().mapToLong(ContinuousTraffic.PairReport::reordered).sum();
        Map<String, Long> pauses = new LinkedHashMap<>();
        Map<String, String> pausedPair = new LinkedHashMap<>();
        Map<String, Integer> reconnects = new LinkedHashMap<>();
        for (ContinuousTraffic.PairReport p : pairs) {
            p.longestPauseMillis().forEach((phase, ms) -> {
                if (ms > pauses.getOrDefault(phase, -1L)) {
                    pauses.put(phase, ms);
                    pausedPair.put(phase, p.name() + " from " + p.longestPauseFrom().get(phase) + "; " + p.longestPauseDetail().get(phase));
                }
            });
            p.reconnectsIn().forEach((phase, n) -> reconnects.merge(phase, n, Integer::sum));
        }
        report.put("pairs", pairs.size() + " (100 QoS 1, 20 QoS 2), 10 msg/s each, persistent subscribers");
        report.put("acknowledged", Long.toString(acked));
        report.put("lost", Long.toString(lost));
        report.put("duplicates (without DUP)", duplicates + " (" + withoutDup + ")");
        report.put("reordered", Long.toString(reordered));
        for (int qos = 1; qos <= 2; qos++) {
            int q = qos;
            report.put("QoS " + qos + " acknowledged per pair (median), beats skipped with a full window (sum)",
                    pairs.stream().filter(p -> p.qos() == q).mapToInt(ContinuousTraffic.PairReport::acked).sorted()
                            .skip(pairs.stream().filter(p -> p.qos() == q).count() / 2).findFirst().orElse(0) + ", "
                            + pairs.stream().filter(p -> p.qos() == q).mapToLong(ContinuousTraffic.PairReport::skippedBeats).sum());
        }
        pairs.stream().flatMap(p -> p.lostMessages().stream().map(m -> p.name() + ": " + m))
                .forEach(m -> report.merge("lost messages", m, (a, b) -> a + "; " + b));
        pauses.forEach((phase, ms) -> report.put("longest pause, " + phase, ms + " ms (" + pausedPair.get(phase) + ")"));
        // Whether a step held up every pair or a few: the median pair's longest pause and how many passed 5 s.
        pauses.keySet().forEach(phase -> {
            long[] longest = pairs.stream().mapToLong(p -> p.longestPauseMillis().getOrDefault(phase, 0L)).sorted().toArray();
            report.put("pairs' longest pause, " + phase, "median " + longest[longest.length / 2] + " ms, "
                    + java.util.Arrays.stream(longest).filter(ms -> ms > SCALE_PAUSE_MILLIS).count() + " of " + longest.length
                    + " over " + SCALE_PAUSE_MILLIS + " ms");
        });
        // When the pauses over 5 s began, by the second: one moment for most pairs points at one event in the servers' logs.
        pauses.keySet().forEach(phase -> {
            Map<String, Long> began = pairs.stream().filter(p -> p.longestPauseMillis().getOrDefault(phase, 0L) > SCALE_PAUSE_MILLIS)
                    .map(p -> p.longestPauseFrom().get(phase).toString().substring(11, 19))
                    .collect(java.util.stream.Collectors.groupingBy(s -> s, java.util.TreeMap::new, java.util.stream.Collectors.counting()));
            if (!began.isEmpty()) {
                report.put("pairs' pauses over 5 s began (UTC second: pairs), " + phase, began.entrySet().stream()
                        .map(e -> e.getKey() + ": " + e.getValue()).collect(java.util.stream.Collectors.joining(", ")));
            }
        });
        reconnects.forEach((phase, n) -> report.put("connections opened again, " + phase, Integer.toString(n)));
        redisMeets.forEach((phase, n) -> report.put("Redis meets by the operator, " + phase, Integer.toString(n)));
        silentAfterReady.forEach((phase, silent) -> report.put("pairs with no message from before Ready until the step ended, " + phase,
                silent.size() + (silent.isEmpty() ? "" : " " + silent.stream().limit(10).toList())));
        if (load != null) {
            report.putAll(load.report());
        }
        // Where messages came out of order: the step they arrived in, and the first few by pair.
        Map<String, Integer> reorderedIn = new LinkedHashMap<>();
        pairs.forEach(p -> p.reorderedIn().forEach((phase, n) -> reorderedIn.merge(phase, n, Integer::sum)));
        reorderedIn.forEach((phase, n) -> report.put("reordered, " + phase, Integer.toString(n)));
        pairs.stream().flatMap(p -> p.reorderings().stream().map(r -> p.name() + ": " + r)).limit(10)
                .forEach(r -> report.merge("reordered messages", r, (a, b) -> a + "; " + b));
        // Where messages came twice: the step they arrived in by QoS, and the first few of the pairs with the most.
        Map<String, int[]> duplicatesIn = new LinkedHashMap<>();
        pairs.forEach(p -> p.duplicatesIn().forEach((phase, n) -> duplicatesIn.computeIfAbsent(phase, k -> new int[2])[p.qos() == 2 ? 1 : 0] += n));
        duplicatesIn.forEach((phase, n) -> report.put("duplicates, " + phase, (n[0] + n[1]) + " (QoS 1: " + n[0] + ", QoS 2: " + n[1] + ")"));
        pairs.stream().sorted(java.util.Comparator.comparingInt(ContinuousTraffic.PairReport::duplicates).reversed())
                .filter(p -> p.duplicates() > 0).limit(5)
                .forEach(p -> report.merge("duplicated messages", p.name() + " (" + p.duplicates() + "): " + String.join("; ", p.duplications()),
                        (a, b) -> a + " | " + b));
        report.forEach((k, v) -> System.out.printf("e2e real cluster: %s: %s%n", k, v));
        pairs.stream().filter(p -> p.lost() > 0 || p.duplicatesWithoutDup() > 0).limit(10)
                .forEach(p -> System.out.println("e2e real cluster, pair with a problem: " + p));

        assertThat(acked).as("the publishers kept going").isGreaterThan(100_000);
        assertThat(lost).as("acknowledged but never delivered").isZero();
        assertThat(withoutDup).as("delivered twice without DUP").isZero();
        // A meet per master that moved, not a loop (run 55 met one master 537 times while Redis flagged it failing).
        redisMeets.forEach((phase, n) -> assertThat(n).as("Redis meets during '%s'", phase).isLessThanOrEqualTo(MEETS_PER_STEP));
        for (String phase : List.of("scale up by spec edit: 5k -> 800k msg/s, 2 brokers", "scale down by spec edit: 800k -> 5k msg/s, 1 broker")) {
            assertThat(silentAfterReady.get(phase)).as("pairs cut off by '%s': no message from before Ready until 5 s after it", phase)
                    .isEmpty();
            assertThat(pauses.getOrDefault(phase, 0L)).as("longest pause during '%s'", phase).isLessThanOrEqualTo(SCALE_PAUSE_LIMIT_MILLIS);
        }
    }

    /**
     * A broker that cannot start says why where users look: the kubelet reads the termination message
     * it wrote, in the container the operator's template makes (restricted security context), and the
     * operator's words for a crash-looping pod carry it. A pod of its own, not one of the StatefulSet's,
     * so the cluster under test keeps running.
     */
    @Test
    @Order(3)
    void aBrokerThatCannotStartSaysWhyInItsPodStatus() {
        var template = client.apps().statefulSets().inNamespace(NS).withName(NAME + "-broker").get().getSpec().getTemplate();
        // Labels of its own, so neither the StatefulSet nor the Service takes it; no requests, so it fits beside the brokers.
        Pod pod = new PodBuilder().withNewMetadata().withName(NAME + "-misconfigured-broker")
                .addToLabels("tbmq.e2e/test", "termination-message").endMetadata().withSpec(template.getSpec()).editSpec()
                .withAffinity(null).editFirstContainer().withResources(new ResourceRequirements())
                .addNewEnv().withName("TBMQ_MQTT_MAX_PACKET_SIZE").withValue("lots").endEnv().endContainer().endSpec().build();
        client.pods().inNamespace(NS).resource(pod).create();
        try {
            AtomicReference<Pod> crashed = new AtomicReference<>();
            await("the misconfigured broker's pod to crash-loop", () -> {
                crashed.set(client.pods().inNamespace(NS).withName(pod.getMetadata().getName()).get());
                return PodDiagnosis.problem(List.of(crashed.get())).isPresent();
            }, Duration.ofMinutes(3));
            var lastState = crashed.get().getStatus().getContainerStatuses().get(0).getLastState().getTerminated();
            System.out.println("e2e real cluster: a misconfigured broker's termination message: " + lastState.getMessage());
            assertThat(lastState.getMessage()).as("what the kubelet read from the container").contains("tbmq.mqtt.max-packet-size");
            String problem = PodDiagnosis.problem(List.of(crashed.get())).orElseThrow();
            System.out.println("e2e real cluster: a misconfigured broker's pod, as the operator reports it: " + problem);
            assertThat(problem).contains(pod.getMetadata().getName() + ": CrashLoopBackOff", "it exited with code 1",
                    "tbmq.mqtt.max-packet-size", "\"lots\"");
        } finally {
            client.pods().inNamespace(NS).withName(pod.getMetadata().getName()).withGracePeriod(0).delete();
        }
    }

    // ------------------------------------------------------------------ helpers

    interface Step {
        void run() throws Exception;
    }

    private static void step(String name, Step body) throws Exception {
        traffic.forEach(t -> t.phase(name));
        if (load != null) {
            load.phase(name);
        }
        long start = System.nanoTime();
        readyAt = null;
        stepStarts.put(name, java.time.LocalTime.now(java.time.ZoneOffset.UTC));
        System.out.printf("e2e real cluster: %s ... (from %s)%n", name, Instant.now());
        int meetsBefore = redisMeets();
        body.run();
        redisMeets.put(name, redisMeets() - meetsBefore);
        if (readyAt != null) {
            long ready = readyAt;
            silentAfterReady.put(name, traffic.stream().flatMap(t -> t.silentSince(ready).stream()).toList());
        }
        report.put("duration, " + name, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) + " s");
    }

    /** CLUSTER MEETs the operator recorded so far, taken or not (an Event repeated is counted on it). */
    private static int redisMeets() {
        return client.v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> "RedisNodesJoined".equals(e.getReason()) || "RedisMeetNotTaken".equals(e.getReason()))
                .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum();
    }

    /** The Redis password in force: the operator's copy of it. */
    private static String redisPassword() {
        var copy = client.secrets().inNamespace(NS).withName(NAME + "-redis-password").get();
        return new String(java.util.Base64.getDecoder().decode(copy.getData().get("password")), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Redis's first reply line to AUTH {@code password} on {@code ip}:6379. */
    private static String redisAuth(String ip, String password) throws java.io.IOException {
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(ip, 6379), 5000);
            socket.setSoTimeout(5000);
            byte[] pw = password.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            socket.getOutputStream().write(("*2\r\n$4\r\nAUTH\r\n$" + pw.length + "\r\n" + password + "\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8)).readLine();
        }
    }

    private static TbmqCluster get() {
        return client.resources(TbmqCluster.class).inNamespace(NS).withName(NAME).get();
    }

    private static Pod pod(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private static TbmqCluster edit(Consumer<TbmqCluster> change) {
        TbmqCluster c = get();
        change.accept(c);
        c.setStatus(null);
        return client.resource(c).update();
    }

    private static void awaitReady(long generation) {
        String[] last = {""};
        long start = System.nanoTime();
        await("Ready for generation " + generation, () -> {
            TbmqCluster c = get();
            Condition r = c == null || c.getStatus() == null ? null : condition(c, "Ready");
            if (r != null && !r.getMessage().equals(last[0])) {
                last[0] = r.getMessage();
                System.out.printf("e2e real cluster: +%5d ms %s%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), last[0]);
            }
            return r != null && "True".equals(r.getStatus()) && c.getStatus().getObservedGeneration() == generation;
        }, READY);
        readyAt = System.nanoTime();
    }

    /** The uid is read before the delete: a pod replaced within a second would otherwise be taken for the old one. */
    private static void deleteAndAwaitReplacement(String name) {
        String before = pod(name).getMetadata().getUid();
        client.pods().inNamespace(NS).withName(name).delete();
        // The pod's own readiness first: the TbmqCluster still says Ready until the operator has seen the deletion.
        await(name + " replaced and ready", () -> {
            Pod p = pod(name);
            return p != null && !p.getMetadata().getUid().equals(before) && p.getStatus().getConditions().stream()
                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        }, Duration.ofMinutes(3));
        awaitReady(get().getMetadata().getGeneration());
    }

    private static Condition condition(TbmqCluster c, String type) {
        return c.getStatus().getConditions().stream().filter(x -> type.equals(x.getType())).findFirst().orElse(null);
    }

    private static void await(String what, BooleanSupplier condition, Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                // not there yet
            }
            sleepMillis(500);
        }
        TbmqCluster c = get();
        throw new AssertionError("timed out waiting for " + what + "; status: " + (c == null ? "none" : Serialization.asYaml(c.getStatus())));
    }

    private static void sleep(int seconds) {
        sleepMillis(seconds * 1000L);
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * What a restarted container's previous log says about its end (the kubelet keeps it until the pod
     * goes): the JVM's crash report (the image crashes on OutOfMemoryError) reduced to the failing
     * thread and its Java frames, or else the last lines.
     */
    private String previousLog(String pod) {
        try {
            List<String> lines = client.pods().inNamespace(NS).withName(pod).terminated().tailingLines(3000).getLog().lines().toList();
            int thread = indexOf(lines, "Current thread");
            int frames = indexOf(lines, "Java frames:");
            if (thread < 0) {
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
            }
            List<String> report = new ArrayList<>(lines.subList(Math.max(0, indexOf(lines, "# A fatal error")), thread + 1));
            if (frames >= 0) {
                report.addAll(lines.subList(frames, Math.min(lines.size(), frames + 25)));
            }
            return String.join("\n", report);
        } catch (RuntimeException e) {
            return "(not readable: " + e.getMessage() + ")";
        }
    }

    private static int indexOf(List<String> lines, String start) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(start)) {
                return i;
            }
        }
        return -1;
    }
}
