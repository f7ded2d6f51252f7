package io.tbmq.broker.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import io.tbmq.broker.auth.PasswordHasher;
import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.Certificates;
import io.tbmq.localstack.LocalStack;

/**
 * The real parts every integration test shares, started once per test JVM: a single-node KRaft
 * Kafka, Redis, and one broker process (the packaged application) with TLS, WebSocket, users,
 * ACLs and PARANOID leak detection. Stopped by PID when the JVM exits.
 */
public final class ItStack implements AutoCloseable {
    public static final String PASSWORD = "it-secret";
    private static ItStack instance;
    private static RuntimeException startFailure;
    private static ItStack cluster;
    private static RuntimeException clusterFailure;

    private final LocalStack stack;
    private final BrokerNode broker;
    private final Certificates certs;
    private final Path dir;

    /** A stack of its own, for tests that stop Kafka or the broker; close it when done. */
    public static ItStack isolated(String name) {
        return isolated(name, Map.of());
    }

    public static ItStack isolated(String name, Map<String, String> brokerConfig) {
        return new ItStack(Path.of("target", name).toAbsolutePath(), false, brokerConfig);
    }

    /** A stack of its own with a 3-master Redis Cluster instead of standalone Redis. */
    public static ItStack isolatedCluster(String name, Map<String, String> brokerConfig) {
        return new ItStack(Path.of("target", name).toAbsolutePath(), true, brokerConfig);
    }

    private ItStack(Path dir) {
        this(dir, false, Map.of());
    }

    private ItStack(Path dir, boolean redisCluster, Map<String, String> brokerConfig) {
        this.dir = dir;
        deleteRecursively(dir);
        LocalStack.Builder builder = LocalStack.builder(dir).kafka().redisSnapshots(true);
        this.stack = (redisCluster ? builder.redisCluster(3) : builder.redis()).start();
        this.certs = new Certificates(dir.resolve("tls")).ensureServer()
                .client("client-good", "sensor-1")
                .untrustedCa("rogue-ca")
                .client("client-rogue", "sensor-1", "rogue-ca", 30);
        this.broker = startBroker("node-it", brokerConfig);
    }

    /** The shared stack; a failed start is reported to every test rather than retried by each. */
    public static synchronized ItStack get() {
        if (startFailure != null) {
            throw startFailure;
        }
        if (instance == null) {
            try {
                instance = new ItStack(Path.of("target", "it-stack").toAbsolutePath());
            } catch (RuntimeException e) {
                startFailure = e;
                throw e;
            }
        }
        return instance;
    }

    /** The shared stack with a 3-master Redis Cluster, started on first use. */
    public static synchronized ItStack cluster() {
        if (clusterFailure != null) {
            throw clusterFailure;
        }
        if (cluster == null) {
            try {
                cluster = new ItStack(Path.of("target", "it-cluster-stack").toAbsolutePath(), true, Map.of());
            } catch (RuntimeException e) {
                clusterFailure = e;
                throw e;
            }
        }
        return cluster;
    }

    public static Path brokerJar() {
        return Path.of(System.getProperty("tbmq.broker.jar", "target/quarkus-app/quarkus-run.jar"));
    }

    /** Another broker node on this stack (its own ports), e.g. one a test may stop. */
    public BrokerNode startBroker(String nodeId, Map<String, String> extra) {
        Map<String, String> config = new LinkedHashMap<>(defaults());
        config.putAll(extra);
        return stack.startBroker(nodeId, brokerJar(), config);
    }

    /** A broker node in a directory of its own, so that it may share another's id (a misconfiguration a test makes). */
    public BrokerNode startBroker(String nodeId, String directory, Map<String, String> extra) {
        BrokerNode node = BrokerNode.onFreePorts(nodeId, brokerJar(), dir.resolve(directory));
        node.config(defaults()).config(extra);
        return stack.startBroker(node);
    }

    /** The cluster every broker of these stacks names in its heartbeats, as the operator names a TbmqCluster's. */
    public static final String CLUSTER = "it/tbmq";

    private Map<String, String> defaults() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("tbmq.security.credentials-file", writeCredentials().toString());
        for (String listener : new String[] {"tls", "wss"}) {
            c.put("tbmq.listeners." + listener + ".enabled", "true");
            c.put("tbmq.listeners." + listener + ".cert", certs.serverCert().toString());
            c.put("tbmq.listeners." + listener + ".key", certs.serverKey().toString());
            c.put("tbmq.listeners." + listener + ".trust-certs", certs.caCert().toString());
        }
        c.put("tbmq.listeners.tcp.host", "127.0.0.1");
        c.put("tbmq.listeners.ws.host", "127.0.0.1");
        c.put("tbmq.listeners.tls.host", "127.0.0.1");
        c.put("tbmq.listeners.wss.host", "127.0.0.1");
        c.put("tbmq.kafka.delivery-timeout", "4s");
        c.put("tbmq.mqtt.max-session-expiry-interval", "3600");
        c.put("io.netty.leakDetection.level", "paranoid");
        c.put("tbmq.cluster.name", CLUSTER);
        return c;
    }

    private Path writeCredentials() {
        Path file = dir.resolve("credentials.yaml");
        if (Files.exists(file)) {
            return file;
        }
        String hash = PasswordHasher.hash(PASSWORD.toCharArray(), 10_000);
        String yaml = String.join("\n",
                "users:",
                "  - username: alice",
                "    password: \"" + hash + "\"",
                "    publish: [\"#\"]",
                "    subscribe: [\"#\"]",
                "  - username: app",
                "    password: \"" + hash + "\"",
                "    clientType: APPLICATION",
                "    publish: [\"#\"]",
                "    subscribe: [\"#\"]",
                "  - username: bob",
                "    password: \"" + hash + "\"",
                "    publish: [\"bob/#\", \"devices/%c/out\"]",
                "    subscribe: [\"bob/#\", \"devices/%c/in\"]",
                "certificates:",
                "  - commonName: sensor-1",
                "    publish: [\"sensors/%u/#\"]",
                "    subscribe: [\"sensors/#\"]",
                "");
        try {
            Files.createDirectories(dir);
            Files.writeString(file, yaml);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return file;
    }

    private static void deleteRecursively(Path path) {
        if (!Files.exists(path)) {
            return;
        }
        try (var walk = Files.walk(path)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot clean " + path, e);
        }
    }

    /** Where this stack keeps its servers' directories and logs. */
    public Path dir() {
        return dir;
    }

    public LocalStack stack() {
        return stack;
    }

    public BrokerNode broker() {
        return broker;
    }

    public Certificates certs() {
        return certs;
    }

    @Override
    public void close() {
        stack.close();
    }
}
