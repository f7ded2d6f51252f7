package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;

import io.tbmq.localstack.LocalStack;
import io.tbmq.localstack.Ports;

/**
 * The container images of `make images`, proven to start with no container runtime: each OCI
 * archive is unpacked (umoci), its entrypoint run under chroot as the image's user with /proc
 * mounted, as a runtime would. The broker must answer an MQTT CONNECT and carry a message through
 * Kafka; the operator must become ready against the e2e control plane.
 */
class ImagesE2E {
    static final String VERSION = "0.1.0";
    static final ObjectMapper JSON = new ObjectMapper();
    static Path repo;
    static Path work;
    static final List<Process> processes = new ArrayList<>();
    static final List<Path> mounts = new ArrayList<>();
    static final Map<String, Path> UNPACKED = new java.util.HashMap<>();

    @BeforeAll
    static void buildImages() throws Exception {
        assertThat(new com.sun.security.auth.module.UnixSystem().getUid())
                .as("the image test unpacks images and runs them under chroot with /proc mounted: it needs root").isZero();
        repo = Path.of(System.getProperty("tbmq.repo", "..")).toAbsolutePath().normalize();
        work = Files.createDirectories(repo.resolve("e2e/target/images-" + System.currentTimeMillis()));
        ProcessBuilder pb = new ProcessBuilder("bash", "scripts/images.sh").directory(repo.toFile()).redirectErrorStream(true)
                .redirectOutput(work.resolve("images.log").toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().put("WORK", work.resolve("build").toString());
        Process p = pb.start();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(work.resolve("images.log"))).isZero();
    }

    @AfterAll
    static void cleanUp() throws Exception {
        for (Process p : processes) {
            p.destroy();
            if (!p.waitFor(15, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        for (Path m : mounts) {
            if (new ProcessBuilder("umount", m.toString()).inheritIO().start().waitFor() != 0) {
                // Still busy (a process of the image not yet gone): detached now, freed when it is, so that no
                // /proc stays mounted under target/ for the next clean or `rm -rf` of the tree to walk into.
                new ProcessBuilder("umount", "-l", m.toString()).inheritIO().start().waitFor();
            }
        }
    }

    @Test
    void theBrokerImageStartsAndCarriesAMessageThroughKafka() throws Exception {
        Path rootfs = unpack("tbmq-broker");
        try (LocalStack stack = LocalStack.builder(work.resolve("stack")).kafka().redis().start()) {
            int mqtt = Ports.free();
            Map<String, String> env = new java.util.HashMap<>();
            stack.brokerConfig().forEach((k, v) -> env.put(k.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(), v));
            env.put("TBMQ_SECURITY_ALLOW_ANONYMOUS", "true");
            env.put("TBMQ_LISTENERS_TCP_PORT", Integer.toString(mqtt));
            env.put("TBMQ_LISTENERS_WS_ENABLED", "false");
            int http = Ports.free();
            env.put("QUARKUS_HTTP_PORT", Integer.toString(http));
            env.put("TBMQ_NODE_ID", "image-0");
            // As the operator sets it for a 1 GiB pod, whose JVM picks the Serial collector (the training run
            // used G1), plus AOTMode=on: the JVM then refuses to start unless it can use the image's AOT cache
            // (a cache it cannot use would otherwise be skipped with a warning).
            env.put("JAVA_TOOL_OPTIONS", "-Xmx512m -XX:MaxDirectMemorySize=256m -XX:+UseSerialGC -XX:AOTMode=on");
            assertThat(entrypoint(rootfs)).as("the broker starts from the AOT cache its image was built with")
                    .contains("-XX:AOTCache=/app/broker.aot");
            assertThat(rootfs.resolve("app/broker.aot")).isNotEmptyFile();
            run(rootfs, env, work.resolve("broker.log"));
            awaitPort(mqtt, work.resolve("broker.log"));
            awaitReady(http, work.resolve("broker.log"));

            Mqtt5BlockingClient sub = Mqtt5Client.builder().identifier("image-sub").serverHost("127.0.0.1").serverPort(mqtt)
                    .buildBlocking();
            assertThat(sub.connect().getReasonCode()).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
            sub.subscribeWith().topicFilter("image/test").qos(MqttQos.AT_LEAST_ONCE).send();
            try (var publishes = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
                Mqtt5BlockingClient pub = Mqtt5Client.builder().identifier("image-pub").serverHost("127.0.0.1").serverPort(mqtt)
                        .buildBlocking();
                pub.connect();
                pub.publishWith().topic("image/test").qos(MqttQos.AT_LEAST_ONCE)
                        .payload("from the image".getBytes(StandardCharsets.UTF_8)).send();
                Mqtt5Publish got = publishes.receive(30, TimeUnit.SECONDS).orElseThrow();
                assertThat(new String(got.getPayloadAsBytes(), StandardCharsets.UTF_8)).isEqualTo("from the image");
                pub.disconnect();
            }
            sub.disconnect();
        }
    }

    /**
     * A Kafka client that reads a reply from something other than Kafka takes its first four bytes for a
     * size and runs out of heap (seen on the real node: a broker's admin client died that way at start-up
     * and the broker then waited for Kafka for good, Ready=False, never restarted). The image's JVM must
     * end on OutOfMemoryError so that Kubernetes restarts the container, and say in its log which
     * thread ran out and where (the JVM's crash report on stderr, no core file).
     */
    @Test
    void theBrokerImageEndsOnOutOfMemoryErrorWithACrashReportSoKubernetesRestartsIt() throws Exception {
        Path rootfs = unpack("tbmq-broker");
        try (LocalStack stack = LocalStack.builder(work.resolve("stack-oom")).redis().start();
                java.net.ServerSocket notKafka = new java.net.ServerSocket(0)) {
            Thread answer = Thread.ofVirtual().start(() -> {
                while (!notKafka.isClosed()) {
                    try (Socket s = notKafka.accept()) {
                        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
                        byte[] request = new byte[in.readInt()];
                        in.readFully(request);
                        if (new String(request, java.nio.charset.StandardCharsets.ISO_8859_1).contains("tbmq-listener-check")) {
                            // The broker's start-up check of its bootstrap address gets a Kafka reply (its
                            // correlation id, error 0): the clients' later connections meet the bad size.
                            s.getOutputStream().write(new byte[] {0, 0, 0, 6, request[4], request[5], request[6], request[7], 0, 0});
                        } else {
                            // a size of 2 GiB, as a reply from a TLS or HTTP port reads to a Kafka client
                            s.getOutputStream().write(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xf0, 0, 0, 0, 0});
                        }
                        s.getOutputStream().flush();
                        Thread.sleep(2_000);
                    } catch (InterruptedException e) {
                        return;
                    } catch (IOException e) {
                        // a connection that ended early, or the socket closed (the loop ends then)
                    }
                }
            });
            Map<String, String> env = new java.util.HashMap<>();
            stack.brokerConfig().forEach((k, v) -> env.put(k.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(), v));
            env.put("TBMQ_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:" + notKafka.getLocalPort());
            env.put("TBMQ_SECURITY_ALLOW_ANONYMOUS", "true");
            env.put("TBMQ_LISTENERS_TCP_PORT", Integer.toString(Ports.free()));
            env.put("TBMQ_LISTENERS_WS_ENABLED", "false");
            env.put("QUARKUS_HTTP_PORT", Integer.toString(Ports.free()));
            env.put("TBMQ_NODE_ID", "image-oom");
            env.put("JAVA_TOOL_OPTIONS", "-Xmx256m");
            Path log = work.resolve("broker-oom.log");
            Process broker = run(rootfs, env, log);
            assertThat(broker.waitFor(120, TimeUnit.SECONDS)).as("the broker exited:\n" + Files.readString(log)).isTrue();
            assertThat(broker.exitValue()).isNotZero();
            assertThat(Files.readString(log)).contains("fatal error: OutOfMemory encountered: Java heap space",
                    "no core file dumped", "Current thread", "JavaThread \"kafka-",
                    "org.apache.kafka.common.network.NetworkReceive.readFrom");
            answer.interrupt();
        }
    }

    @Test
    void theOperatorImageBecomesReadyAgainstARealApiServer() throws Exception {
        Path rootfs = unpack("tbmq-operator");
        try (ControlPlane plane = ControlPlane.start(repo, work.resolve("k8s"), 1); var client = plane.client()) {
            // Both CRDs: the operator starts only where every resource it reconciles is served.
            for (String crdFile : List.of("crds/tbmqclusters.tbmq.io-v1.yml", "crds/tbmqusers.tbmq.io-v1.yml")) {
                try (var crd = Files.newInputStream(repo.resolve(crdFile))) {
                    client.load(crd).serverSideApply();
                }
            }
            // The kubeconfig with its certificates inlined, inside the image's filesystem.
            Path kubeconfig = rootfs.resolve("tmp/kubeconfig");
            Files.writeString(kubeconfig, inline(Files.readString(plane.kubeconfig())));
            Files.setPosixFilePermissions(kubeconfig, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            int http = Ports.free();
            run(rootfs, Map.of("KUBECONFIG", "/tmp/kubeconfig", "QUARKUS_HTTP_PORT", Integer.toString(http)),
                    work.resolve("operator.log"));
            awaitReady(http, work.resolve("operator.log"));

            // Its own metrics: java-operator-sdk's reconciliation counters once it has a resource to reconcile.
            try (var sample = Files.newInputStream(repo.resolve("config/samples/tbmq-dev.yaml"))) {
                client.load(sample).inNamespace("default").serverSideApply();
            }
            Instant deadline = Instant.now().plusSeconds(60);
            String metrics = "";
            while (Instant.now().isBefore(deadline) && !metrics.contains("operator_sdk_reconciliations_started_total")) {
                Thread.sleep(500);
                metrics = body("http://127.0.0.1:" + http + "/q/metrics");
            }
            assertThat(metrics).as("the operator's /q/metrics").contains("operator_sdk_reconciliations_started_total", "jvm_memory_used_bytes");
        }
    }


    @Test
    void theBundleImageHoldsTheBundleWithItsAnnotationsAsLabels() throws Exception {
        Path layout = layout("tbmq-operator-bundle");
        JsonNode manifest = blob(layout, JSON.readTree(layout.resolve("index.json").toFile()).at("/manifests/0/digest").asText());
        JsonNode config = blob(layout, manifest.at("/config/digest").asText());
        Map<String, String> labels = new java.util.TreeMap<>();
        config.at("/config/Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
        Map<String, String> annotations = new java.util.TreeMap<>();
        new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                .readTree(repo.resolve("bundle/metadata/annotations.yaml").toFile()).get("annotations").properties()
                .forEach(e -> annotations.put(e.getKey(), e.getValue().asText()));
        // OLM reads the bundle's format from the image labels and from metadata/annotations.yaml: they must agree.
        assertThat(labels).isEqualTo(annotations);

        Path bundle = work.resolve("tbmq-operator-bundle-bundle");
        exec("umoci", "unpack", "--image", layout + ":" + VERSION, bundle.toString());
        Path rootfs = bundle.resolve("rootfs");
        assertThat(files(rootfs)).containsKeys("manifests/tbmq-operator.clusterserviceversion.yaml", "metadata/annotations.yaml");
        assertThat(files(rootfs)).isEqualTo(files(repo.resolve("bundle")).entrySet().stream()
                .filter(e -> e.getKey().startsWith("manifests/") || e.getKey().startsWith("metadata/"))
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, java.util.TreeMap::new)));
    }

    @Test
    void everyImagePushesToARegistryWithSkopeoAsTheInstallGuideSays() throws Exception {
        Process tools = new ProcessBuilder("bash", "scripts/registry.sh").directory(repo.toFile())
                .redirectError(work.resolve("registry-tools.log").toFile()).start();
        String out = new String(tools.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(tools.waitFor(15, TimeUnit.MINUTES)).isTrue();
        assertThat(tools.exitValue()).as(Files.readString(work.resolve("registry-tools.log"))).isZero();
        String registryBinary = out.substring(out.lastIndexOf('\n') + 1);

        int port = Ports.free();
        Path config = work.resolve("registry.yml");
        Files.writeString(config, "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: "
                + work.resolve("registry-data") + "\nhttp:\n  addr: 127.0.0.1:" + port + "\n");
        ProcessBuilder pb = new ProcessBuilder(registryBinary, "serve", config.toString()).redirectErrorStream(true)
                .redirectOutput(work.resolve("registry.log").toFile());
        pb.environment().put("OTEL_TRACES_EXPORTER", "none");
        processes.add(pb.start());
        awaitPort(port, work.resolve("registry.log"));

        String registry = "127.0.0.1:" + port;
        Map<String, String> images = Map.of("tbmq-broker", "tbmq/tbmq-broker", "tbmq-operator", "tbmq/tbmq-operator",
                "tbmq-operator-bundle", "tbmq/tbmq-operator-bundle");
        for (Map.Entry<String, String> image : images.entrySet()) {
            String archive = "target/images/" + image.getKey() + "-" + VERSION + ".oci.tar";
            String reference = "docker://" + registry + "/" + image.getValue() + ":" + VERSION;
            // docs/install.md's push command; --dest-tls-verify=false because this registry speaks plain HTTP.
            execIn(repo, "skopeo", "copy", "--dest-tls-verify=false", "oci-archive:" + archive, reference);
            JsonNode pushed = JSON.readTree(execIn(repo, "skopeo", "inspect", "--tls-verify=false", reference));
            JsonNode local = JSON.readTree(execIn(repo, "skopeo", "inspect", "oci-archive:" + archive));
            assertThat(pushed.get("Digest").asText()).as(image.getKey() + ": the registry holds the archive's image")
                    .isEqualTo(local.get("Digest").asText());
            assertThat(pushed.get("Architecture").asText()).isEqualTo("amd64");
            assertThat(pushed.get("Labels")).isEqualTo(local.get("Labels"));
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The OCI image layout inside an archive of `make images`. */
    private static Path layout(String name) throws Exception {
        Path layout = Files.createDirectories(work.resolve(name + "-layout"));
        exec("tar", "-C", layout.toString(), "-xf", repo.resolve("target/images/" + name + "-" + VERSION + ".oci.tar").toString());
        return layout;
    }

    private static JsonNode blob(Path layout, String digest) throws IOException {
        return JSON.readTree(layout.resolve("blobs/sha256/" + digest.substring("sha256:".length())).toFile());
    }

    /** Every regular file under {@code root}, by relative path, with its content's digest. */
    private static Map<String, String> files(Path root) throws Exception {
        Map<String, String> files = new java.util.TreeMap<>();
        try (var walk = Files.walk(root)) {
            for (Path f : walk.filter(Files::isRegularFile).toList()) {
                files.put(root.relativize(f).toString(), java.util.HexFormat.of().formatHex(
                        java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
            }
        }
        return files;
    }

    private static String execIn(Path dir, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }

    /** Unpacks the OCI archive the way a runtime does (once per image); returns the root filesystem, /proc mounted. */
    private static synchronized Path unpack(String name) throws Exception {
        Path done = UNPACKED.get(name);
        if (done != null) {
            return done;
        }
        Path layout = layout(name);
        Path bundle = work.resolve(name + "-bundle");
        exec("umoci", "unpack", "--image", layout + ":" + VERSION, bundle.toString());
        Path rootfs = bundle.resolve("rootfs");
        exec("mount", "-t", "proc", "proc", rootfs.resolve("proc").toString());
        mounts.add(rootfs.resolve("proc"));
        UNPACKED.put(name, rootfs);
        return rootfs;
    }

    private static List<String> entrypoint(Path rootfs) throws IOException {
        List<String> args = new ArrayList<>();
        JSON.readTree(rootfs.resolveSibling("config.json").toFile()).at("/process/args").forEach(a -> args.add(a.asText()));
        return args;
    }

    /** Runs the image's entrypoint from its runtime config: user, working directory, environment. */
    private static Process run(Path rootfs, Map<String, String> extraEnv, Path log) throws IOException {
        JsonNode process = JSON.readTree(rootfs.resolveSibling("config.json").toFile()).get("process");
        List<String> cmd = new ArrayList<>(List.of("chroot", "--userspec=" + process.at("/user/uid").asInt() + ":"
                + process.at("/user/gid").asInt(), rootfs.toString()));
        process.get("args").forEach(a -> cmd.add(a.asText()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().clear();
        process.get("env").forEach(e -> {
            String[] kv = e.asText().split("=", 2);
            pb.environment().put(kv[0], kv[1]);
        });
        pb.environment().putAll(extraEnv);
        // chroot does not change directory: the image's working directory is where relative paths land.
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    private static void awaitPort(int port, Path log) throws Exception {
        Instant deadline = Instant.now().plusSeconds(90);
        while (Instant.now().isBefore(deadline)) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(250);
            }
        }
        throw new AssertionError("broker from the image not listening on " + port + ":\n" + Files.readString(log));
    }

    /** As Kubernetes would: traffic only once /q/health/ready says so. */
    private static void awaitReady(int http, Path log) throws Exception {
        Instant deadline = Instant.now().plusSeconds(90);
        int code = 0;
        while (Instant.now().isBefore(deadline) && code != 200) {
            code = status("http://127.0.0.1:" + http + "/q/health/ready");
            Thread.sleep(250);
        }
        assertThat(code).as(Files.readString(log)).isEqualTo(200);
    }

    private static String body(String url) {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            try (var in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return "";
        }
    }

    private static int status(String url) {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            return c.getResponseCode();
        } catch (IOException e) {
            return 0;
        }
    }

    /** Replaces certificate file paths in a kubeconfig with their base64 content (*-data keys). */
    private static String inline(String kubeconfig) throws IOException {
        StringBuilder out = new StringBuilder();
        for (String line : kubeconfig.split("\n")) {
            String t = line.trim();
            int colon = t.indexOf(": ");
            String key = colon < 0 ? "" : t.substring(0, colon);
            if (key.equals("certificate-authority") || key.equals("client-certificate") || key.equals("client-key")) {
                String data = Base64.getEncoder().encodeToString(Files.readAllBytes(Path.of(t.substring(colon + 2))));
                out.append(line, 0, line.indexOf(key)).append(key).append("-data: ").append(data).append('\n');
            } else {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }

    private static void exec(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
    }

}
