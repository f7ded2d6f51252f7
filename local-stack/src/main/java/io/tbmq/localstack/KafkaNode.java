package io.tbmq.localstack;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * A single-node Kafka in KRaft mode (broker and controller in one process), run in a child JVM
 * from the kafka_2.13 jars Maven resolved for this module. About 5 s to start.
 */
public final class KafkaNode implements AutoCloseable {
    private static final String CLASSPATH_RESOURCE = "kafka-server.classpath";

    private final Path dir;
    private final int port;
    private final int controllerPort;
    private final String heap;
    private final List<String> jvmOptions = new ArrayList<>();
    private ManagedProcess process;

    public KafkaNode(Path dir, String heap) {
        this.dir = dir;
        this.heap = heap;
        this.port = Ports.free();
        this.controllerPort = Ports.free();
    }

    /** An extra JVM option for the Kafka process (the benchmark compares garbage collectors with it). */
    public KafkaNode jvmOption(String option) {
        jvmOptions.add(option);
        return this;
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    public ManagedProcess process() {
        return process;
    }

    public KafkaNode start(Duration timeout) {
        try {
            Files.createDirectories(dir);
            Path properties = writeServerProperties();
            Path log4j = dir.resolve("log4j2.properties");
            try (InputStream in = KafkaNode.class.getResourceAsStream("kafka-log4j2.properties")) {
                Files.write(log4j, in.readAllBytes());
            }
            List<String> jvm = new ArrayList<>(List.of(Tools.java(), "-Xms256m", "-Xmx" + heap));
            if (jvmOptions.stream().noneMatch(o -> o.startsWith("-XX:+Use") && o.endsWith("GC"))) {
                jvm.add("-XX:+UseG1GC");
            }
            jvm.addAll(jvmOptions);
            jvm.addAll(List.of("-Dlog4j2.configurationFile=" + log4j, "-cp", serverClasspath()));
            format(jvm, properties, timeout);
            List<String> server = new ArrayList<>(jvm);
            server.addAll(List.of("kafka.Kafka", properties.toString()));
            process = ProcessLauncher.get().start("kafka", server, dir, Map.of());
            awaitReady(timeout);
            return this;
        } catch (IOException e) {
            throw new IllegalStateException("could not prepare Kafka in " + dir + ": " + e.getMessage(), e);
        }
    }

    private Path writeServerProperties() throws IOException {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("offsets.topic.num.partitions", "8");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        // The broker creates its own topics; a typo must not silently create a new one.
        p.setProperty("auto.create.topics.enable", "false");
        p.setProperty("num.partitions", "1");
        p.setProperty("log.retention.hours", "24");
        p.setProperty("log.segment.bytes", Integer.toString(64 * 1024 * 1024));
        p.setProperty("num.network.threads", "2");
        p.setProperty("num.io.threads", "4");
        // Single node, nothing else on the machine: fsync is left to the OS as Kafka recommends.
        Path file = dir.resolve("server.properties");
        try (var out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(out, "local-stack single-node KRaft Kafka");
        }
        return file;
    }

    private void format(List<String> jvm, Path properties, Duration timeout) {
        if (Files.exists(dir.resolve("data").resolve("meta.properties"))) {
            return;
        }
        List<String> cmd = new ArrayList<>(jvm);
        cmd.addAll(List.of("kafka.tools.StorageTool", "format", "-t", UUID.randomUUID().toString().replace("-", "").substring(0, 22),
                "-c", properties.toString(), "--ignore-formatted"));
        ManagedProcess format = ProcessLauncher.get().start("kafka-format", cmd, dir, Map.of());
        if (!format.waitFor(timeout) || format.exitCode() != 0) {
            format.stop(Duration.ofSeconds(5));
            throw new IllegalStateException("formatting Kafka storage failed, see " + format.log());
        }
        ProcessLauncher.get().forget(format);
    }

    private void awaitReady(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Kafka exited during start, see " + process.log());
            }
            try (Admin admin = Admin.create(config)) {
                if (!admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).isEmpty()) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            sleep(250);
        }
        throw new IllegalStateException("Kafka not ready within " + timeout + " (" + last + "), see " + process.log());
    }

    private static String serverClasspath() throws IOException {
        try (InputStream in = KafkaNode.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(CLASSPATH_RESOURCE + " missing: build the local-stack module with Maven first");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public void stop() {
        if (process != null) {
            process.stop(Duration.ofSeconds(20));
        }
    }

    /** Restarts on the same ports and data, as after a crash or a rolling restart. */
    public void restart(Duration timeout) {
        stop();
        start(timeout);
    }

    @Override
    public void close() {
        stop();
    }
}
