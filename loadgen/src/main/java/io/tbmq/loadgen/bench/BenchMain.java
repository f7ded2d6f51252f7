package io.tbmq.loadgen.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.LocalStack;
import io.tbmq.localstack.Tools;

/**
 * {@code make bench}: runs every scenario against this broker (with its Kafka and Redis) and
 * against mosquitto on the same machine in the same run, one at a time, sampling the CPU of every
 * process during each measurement window, and writes the results into docs/benchmarks.md (between
 * its markers), docs/bench/results.json and SVG plots.
 *
 * <p>Environment: BENCH_SECONDS (measurement window, default 30), BENCH_ONLY (a scenario name
 * prefix), BENCH_REPEAT (runs per scenario and target, the median is reported; default 1),
 * BENCH_TARGETS (tbmq,mosquitto), BENCH_SET (extra broker settings, key=value,key=value), BENCH_REPORT
 * (false to print results without rewriting docs/benchmarks.md, for sweeps), BENCH_WARMUP (seconds of
 * discarded load per target before the first scenario, default 60; longer, up to BENCH_WARMUP_MAX seconds
 * (default 300), while the server JVMs are still JIT-compiling), BENCH_NODES (broker nodes, default 1;
 * with more, each pair's publisher and subscriber are on different nodes), BENCH_REDIS ({@code standalone} or
 * {@code cluster}: a local 3-master Redis Cluster).
 */
public final class BenchMain {
    private static final String USER = "bench";
    private static final String PASSWORD = "bench-password";
    private static final ObjectMapper JSON = new ObjectMapper();

    record Scenario(String name, String kind, int clients, double rate, int qos, boolean persistent) {
        double offered() {
            return kind.equals("fanout") ? rate * (1 + clients) : 2 * rate * clients;
        }
    }

    record Target(String name, String ports, Map<String, Long> pids) {
    }

    /** The load of the warm-up: the TBMQ paper's P2P test at 5 msg/s per publisher (10,000 msg/s in+out). */
    private static final Scenario WARMUP = new Scenario("warmup", "p2p", 1000, 5, 1, true);
    private static final int WARMUP_ROUND_SECONDS = 30;
    /** JIT compiler cores of any one server process below which it counts as warmed up. */
    private static final double SETTLED_JIT_CORES = 0.02;

    private BenchMain() {
    }

    static List<Scenario> scenarios() {
        List<Scenario> s = new ArrayList<>();
        for (double rate : new double[] {2, 5, 10}) {
            s.add(new Scenario("p2p-qos0-" + (int) rate, "p2p", 1000, rate, 0, false));
        }
        // The TBMQ paper's P2P performance test: QoS 1, persistent subscribers, steps of increasing rate (4 and 5 msg/s
        // per publisher are where the reference broker's p95 reached 51 and 97 ms on this machine kind).
        // 7.5 and 15: half of and the rate the delivery path is held to (30,000 msg/s in+out).
        for (double rate : new double[] {2, 4, 5, 7.5, 10, 12, 15}) {
            s.add(new Scenario("p2p-qos1-" + (rate == Math.rint(rate) ? Integer.toString((int) rate) : Double.toString(rate)), "p2p",
                    1000, rate, 1, true));
        }
        for (int qos : new int[] {0, 1}) {
            for (double rate : new double[] {50, 100}) {
                s.add(new Scenario("fanout-qos" + qos + "-" + (int) rate, "fanout", 100, rate, qos, false));
            }
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath();
        if (args.length > 1 && args[1].equals("--report-only")) {
            // Re-render docs/benchmarks.md and the plots from docs/bench/results.json.
            List<ObjectNode> saved = new ArrayList<>();
            JSON.readTree(root.resolve("docs/bench/results.json").toFile()).forEach(n -> saved.add((ObjectNode) n));
            new BenchReport(root, Integer.parseInt(System.getenv().getOrDefault("BENCH_SECONDS", "30")),
                    Integer.parseInt(System.getenv().getOrDefault("BENCH_REPEAT", "1"))).write(saved);
            return;
        }
        int seconds = Integer.parseInt(System.getenv().getOrDefault("BENCH_SECONDS", "30"));
        int repeat = Integer.parseInt(System.getenv().getOrDefault("BENCH_REPEAT", "1"));
        String only = System.getenv().getOrDefault("BENCH_ONLY", "");
        Path work = root.resolve("target/bench");
        Path jar = root.resolve("broker/target/quarkus-app/quarkus-run.jar");

        deleteRecursively(work);
        List<ObjectNode> results = new ArrayList<>();
        boolean redisCluster = "cluster".equals(System.getenv("BENCH_REDIS"));
        LocalStack.Builder builder = LocalStack.builder(work.resolve("stack")).kafka();
        // BENCH_KAFKA_JVM / BENCH_BROKER_JVM: extra JVM options (space-separated), e.g. another collector.
        jvmOptions("BENCH_KAFKA_JVM").forEach(builder::kafkaJvmOption);
        builder = redisCluster ? builder.redisCluster(3) : builder.redis();
        try (LocalStack stack = builder.start();
                Mosquitto mosquitto = new Mosquitto(work.resolve("mosquitto"), USER, PASSWORD)) {
            Map<String, String> config = new LinkedHashMap<>();
            config.put("tbmq.security.credentials", credentials(jar));
            config.put("tbmq.listeners.ws.enabled", "false");
            for (String kv : System.getenv().getOrDefault("BENCH_SET", "").split(",")) {
                if (kv.contains("=")) {
                    config.put(kv.substring(0, kv.indexOf('=')).trim(), kv.substring(kv.indexOf('=') + 1).trim());
                }
            }
            // BENCH_NODES=N: a cluster of N broker nodes; every pair's publisher and subscriber on different nodes.
            int brokerNodes = Integer.parseInt(System.getenv().getOrDefault("BENCH_NODES", "1"));
            List<BrokerNode> brokers = new ArrayList<>();
            for (int n = 0; n < brokerNodes; n++) {
                String id = n == 0 ? "bench" : "bench-" + n;
                BrokerNode node = BrokerNode.onFreePorts(id, jar, work.resolve("stack").resolve("broker-" + id)).config(config);
                jvmOptions("BENCH_BROKER_JVM").forEach(node::jvmOption);
                brokers.add(stack.startBroker(node));
            }
            BrokerNode broker = brokers.get(0);
            List<String> wanted = List.of(System.getenv().getOrDefault("BENCH_TARGETS", "tbmq,mosquitto").split(","));
            Map<String, Long> tbmqPids = new LinkedHashMap<>();
            for (int n = 0; n < brokers.size(); n++) {
                tbmqPids.put(n == 0 ? "broker" : "broker" + (n + 1), brokers.get(n).process().pid());
            }
            tbmqPids.put("kafka", stack.kafka().process().pid());
            String aof = System.getenv().getOrDefault("BENCH_REDIS_AOF", "");
            if (aof.equals("always") || aof.equals("everysec")) {
                // BENCH_REDIS_AOF=always|everysec: every Redis node with an append-only file, fsynced so.
                List<Integer> redisPorts = redisCluster
                        ? stack.redisCluster().orElseThrow().nodes().stream().map(n -> n.port()).toList()
                        : List.of(stack.redis().orElseThrow().port());
                for (int port : redisPorts) {
                    String reply = io.tbmq.localstack.RedisCli.command(port, "CONFIG SET appendfsync " + aof);
                    if (reply.startsWith("+OK")) {
                        reply = io.tbmq.localstack.RedisCli.command(port, "CONFIG SET appendonly yes");
                    }
                    if (!reply.startsWith("+OK")) {
                        throw new IllegalStateException("could not turn on AOF on Redis " + port + ": " + reply);
                    }
                }
            }
            if (redisCluster) {
                var nodes = stack.redisCluster().orElseThrow().nodes();
                for (int i = 0; i < nodes.size(); i++) {
                    tbmqPids.put("redis" + (i + 1), nodes.get(i).process().pid());
                }
            } else {
                tbmqPids.put("redis", stack.redis().orElseThrow().process().pid());
            }
            String ports = String.join(",", brokers.stream().map(b -> Integer.toString(b.mqttPort())).toList());
            List<Target> targets = List.of(new Target("tbmq", ports, tbmqPids),
                    new Target("mosquitto", Integer.toString(mosquitto.port()), Map.of("mosquitto", mosquitto.pid())));
            // JIT-compile the broker, Kafka and mosquitto paths first: measured windows are steady state.
            int warmup = Integer.parseInt(System.getenv().getOrDefault("BENCH_WARMUP", "60"));
            int warmupMax = Integer.parseInt(System.getenv().getOrDefault("BENCH_WARMUP_MAX", "300"));
            for (Target t : targets) {
                if (wanted.contains(t.name()) && warmup > 0) {
                    warmUp(t, warmup, warmupMax);
                }
            }
            for (Scenario s : scenarios()) {
                if (!s.name().startsWith(only)) {
                    continue;
                }
                for (Target t : targets) {
                    if (!wanted.contains(t.name())) {
                        continue;
                    }
                    List<ObjectNode> runs = new ArrayList<>();
                    for (int r = 0; r < repeat; r++) {
                        runs.add(run(s, t, seconds));
                    }
                    ObjectNode median = median(runs);
                    results.add(median);
                    System.out.printf(Locale.ROOT, "%-18s %-10s in+out %6.0f msg/s  p50 %6.1f ms  p95 %7.1f ms  lost %d  server cores %.2f %s%s%n",
                            s.name(), t.name(), median.get("inOutPerSec").asDouble(), ms(median, "e2eMicros", "p50"),
                            ms(median, "e2eMicros", "p95"), median.get("lost").asLong(), median.get("serverCores").asDouble(),
                            median.get("cores"), jitNote(median));
                }
            }
        }
        if (!"false".equals(System.getenv("BENCH_REPORT"))) {
            new BenchReport(root, seconds, repeat).write(merged(root, results));
        }
    }

    /**
     * The new results plus the saved ones of scenarios not run this time (BENCH_ONLY re-runs a
     * part of the suite without dropping the rest), in the suite's order.
     */
    static List<ObjectNode> merged(Path root, List<ObjectNode> fresh) throws IOException {
        Path saved = root.resolve("docs/bench/results.json");
        List<ObjectNode> all = new ArrayList<>(fresh);
        if (Files.exists(saved)) {
            for (JsonNode old : JSON.readTree(saved.toFile())) {
                boolean replaced = fresh.stream().anyMatch(n -> n.get("name").asText().equals(old.get("name").asText())
                        && n.get("target").asText().equals(old.get("target").asText()));
                if (!replaced) {
                    all.add((ObjectNode) old);
                }
            }
        }
        List<String> order = new ArrayList<>(scenarios().stream().map(Scenario::name).toList());
        all.removeIf(n -> !order.contains(n.get("name").asText()));
        all.sort(java.util.Comparator.comparingInt((ObjectNode n) -> order.indexOf(n.get("name").asText()))
                .thenComparing(n -> n.get("target").asText().equals("tbmq") ? 0 : 1));
        return all;
    }

    private static List<String> jvmOptions(String variable) {
        String value = System.getenv().getOrDefault(variable, "").trim();
        return value.isEmpty() ? List.of() : List.of(value.split("\\s+"));
    }

    private static String credentials(Path jar) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(Tools.java(), "-jar", jar.toString(), "hash-password", "10000")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        p.getOutputStream().write((PASSWORD + "\n").getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String hash = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor(60, TimeUnit.SECONDS);
        return "users:\n  - username: " + USER + "\n    password: \"" + hash + "\"\n    publish: [\"#\"]\n    subscribe: [\"#\"]\n";
    }

    /**
     * Warms {@code t} up for {@code seconds}, then for another {@link #WARMUP_ROUND_SECONDS} at a time
     * while a server process's JIT compilers still took more than {@link #SETTLED_JIT_CORES} in the
     * last window, up to {@code maxSeconds} in all. On two cores, several JVMs started together
     * (Kafka and two or three brokers) still compile for minutes; a window measured then counts
     * the compiling as the broker's work.
     */
    private static void warmUp(Target t, int seconds, int maxSeconds) throws Exception {
        System.out.println("warming up " + t.name() + " for " + seconds + " s");
        ObjectNode round = run(WARMUP, t, seconds);
        int spent = seconds;
        double jit = maxJitCores(round);
        while (jit > SETTLED_JIT_CORES && spent < maxSeconds) {
            System.out.printf(Locale.ROOT, "still compiling (%.3f cores of JIT in one process: %s); warming up %d s more%n", jit,
                    round.get("jitCores"), WARMUP_ROUND_SECONDS);
            round = run(WARMUP, t, WARMUP_ROUND_SECONDS);
            spent += WARMUP_ROUND_SECONDS;
            jit = maxJitCores(round);
        }
        if (jit > SETTLED_JIT_CORES) {
            System.out.printf(Locale.ROOT, "warning: %s still compiling after %d s of warm-up (%s)%n", t.name(), spent, round.get("jitCores"));
        } else {
            System.out.printf(Locale.ROOT, "%s warmed up after %d s (JIT cores in the last window: %s)%n", t.name(), spent,
                    round.get("jitCores"));
        }
    }

    private static double maxJitCores(ObjectNode result) {
        double max = 0;
        for (JsonNode c : result.get("jitCores")) {
            max = Math.max(max, c.asDouble());
        }
        return max;
    }

    /** " jit {...}" when compiling took a visible share of the window, else nothing. */
    private static String jitNote(ObjectNode result) {
        return maxJitCores(result) >= 0.01 ? " jit " + result.get("jitCores") : "";
    }

    private static ObjectNode run(Scenario s, Target t, int seconds) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Tools.java(), "-Xmx1g", "-cp", System.getProperty("java.class.path"),
                "io.tbmq.loadgen.LoadgenMain", "--ports", t.ports(), "--user", USER, "--password", PASSWORD,
                "--scenario", s.kind(), "--pairs", Integer.toString(s.clients()), "--rate", Double.toString(s.rate()),
                "--qos", Integer.toString(s.qos()), "--persistent", Boolean.toString(s.persistent()),
                "--warmup", "5", "--duration", Integer.toString(seconds), "--drain", "10",
                "--run-id", s.name() + "-" + t.name() + "-" + Long.toString(System.nanoTime() % 100_000, 36)));
        Process loadgen = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Map<String, Double> cpuStart = new LinkedHashMap<>();
        Map<String, Double> cpuEnd = new LinkedHashMap<>();
        Map<String, Map<String, Double>> jitStart = new LinkedHashMap<>();
        Map<String, Map<String, Double>> jitEnd = new LinkedHashMap<>();
        long start = 0;
        long end = 0;
        String json = null;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(loadgen.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.equals("MEASURE-START")) {
                    start = System.nanoTime();
                    sample(t, loadgen.pid(), cpuStart, jitStart);
                } else if (line.equals("MEASURE-END")) {
                    end = System.nanoTime();
                    sample(t, loadgen.pid(), cpuEnd, jitEnd);
                } else if (line.startsWith("{")) {
                    json = line;
                } else if (line.contains("Exception")) {
                    System.err.println("loadgen: " + line);
                }
            }
        }
        loadgen.waitFor(60, TimeUnit.SECONDS);
        if (json == null || start == 0 || end == 0) {
            throw new IllegalStateException("load generator failed for " + s.name() + " on " + t.name());
        }
        double window = (end - start) / 1e9;
        ObjectNode result = (ObjectNode) JSON.readTree(json);
        result.put("name", s.name()).put("target", t.name()).put("offeredPerSec", s.offered());
        result.put("windowSeconds", seconds).put("date", java.time.LocalDate.now().toString());
        if (t.name().equals("tbmq")) {
            result.put("settings", settings());
        }
        ObjectNode cores = result.putObject("cores");
        double server = 0;
        for (String process : cpuStart.keySet()) {
            double c = (cpuEnd.get(process) - cpuStart.get(process)) / window;
            cores.put(process, Math.round(c * 100) / 100.0);
            if (!process.equals("loadgen")) {
                server += c;
            }
        }
        // Of those cores, what the server JVMs' JIT compilers took (it belongs to start-up, not to the load).
        ObjectNode jit = result.putObject("jitCores");
        jitStart.forEach((process, before) -> {
            if (!before.isEmpty()) {
                jit.put(process, Math.round(ProcessCpu.compilerDelta(before, jitEnd.get(process)) / window * 1000) / 1000.0);
            }
        });
        result.put("serverCores", Math.round(server * 100) / 100.0);
        result.put("perServerCore", server > 0 ? Math.round(result.get("inOutPerSec").asDouble() / server) : 0);
        return result;
    }

    /** The non-default broker settings of this run, as the report shows them. */
    private static String settings() {
        String set = System.getenv().getOrDefault("BENCH_SET", "").trim();
        String redis = ("cluster".equals(System.getenv("BENCH_REDIS")) ? "Redis Cluster (3 masters)" : "")
                + (System.getenv().getOrDefault("BENCH_REDIS_AOF", "").isEmpty() ? ""
                        : " Redis AOF, appendfsync " + System.getenv("BENCH_REDIS_AOF"));
        redis = redis.trim();
        String nodes = System.getenv().getOrDefault("BENCH_NODES", "1").equals("1") ? ""
                : System.getenv("BENCH_NODES") + " broker nodes, pairs across nodes";
        String brokerJvm = jvmOptions("BENCH_BROKER_JVM").isEmpty() ? "" : "broker JVM " + String.join(" ", jvmOptions("BENCH_BROKER_JVM"));
        String kafkaJvm = jvmOptions("BENCH_KAFKA_JVM").isEmpty() ? "" : "Kafka JVM " + String.join(" ", jvmOptions("BENCH_KAFKA_JVM"));
        return String.join("; ", java.util.stream.Stream.of(set, redis, nodes, brokerJvm, kafkaJvm)
                .filter(x -> !x.isEmpty()).toList());
    }

    private static void sample(Target t, long loadgenPid, Map<String, Double> into, Map<String, Map<String, Double>> jit) {
        t.pids().forEach((name, pid) -> {
            into.put(name, ProcessCpu.seconds(pid));
            jit.put(name, ProcessCpu.compilerThreads(pid));
        });
        into.put("loadgen", ProcessCpu.seconds(loadgenPid));
    }

    /** The run with the median in+out throughput (the only one when repeat is 1). */
    private static ObjectNode median(List<ObjectNode> runs) {
        List<ObjectNode> sorted = new ArrayList<>(runs);
        sorted.sort((a, b) -> Double.compare(a.get("inOutPerSec").asDouble(), b.get("inOutPerSec").asDouble()));
        ObjectNode m = sorted.get(sorted.size() / 2);
        m.put("repeats", runs.size());
        return m;
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!java.nio.file.Files.exists(path)) {
            return;
        }
        try (var walk = java.nio.file.Files.walk(path)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.deleteIfExists(p);
            }
        }
    }

    static double ms(JsonNode r, String histogram, String field) {
        JsonNode h = r.get(histogram);
        return h == null || h.isNull() ? Double.NaN : h.get(field).asDouble() / 1000.0;
    }
}
