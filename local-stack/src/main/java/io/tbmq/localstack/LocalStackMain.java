package io.tbmq.localstack;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code make run}: starts Kafka, Redis and N broker nodes on fixed, well-known ports, prints how
 * to connect, and stops everything on Ctrl-C (or when a broker dies).
 *
 * <pre>
 * --dir DIR           run directory (default .run)
 * --nodes N           broker nodes (default 1); MQTT on 1883..1883+N-1
 * --broker-jar PATH   default broker/target/quarkus-app/quarkus-run.jar
 * --redis-cluster     a 3-master Redis Cluster instead of standalone Redis (default when N > 1)
 * --anonymous         also allow clients without credentials
 * --no-broker         only Kafka and Redis (for running a broker from an IDE)
 * --set KEY=VALUE     any broker setting (repeatable), e.g. --set tbmq.mqtt.max-keep-alive=60
 * </pre>
 */
public final class LocalStackMain {
    private static final int TCP_BASE = 1883;
    private static final int TLS_BASE = 8883;
    private static final int WS_BASE = 8083;
    private static final int WSS_BASE = 8084;
    private static final int HTTP_BASE = 9090;
    private static final String USER = "tbmq";

    public static void main(String[] args) throws Exception {
        List<String> settings = new ArrayList<>();
        Map<String, String> opts = parse(args, settings);
        Path dir = Path.of(opts.getOrDefault("dir", ".run")).toAbsolutePath();
        int nodes = Integer.parseInt(opts.getOrDefault("nodes", "1"));
        if (nodes < 1 || nodes > 9) {
            System.err.println("NODES=" + nodes + ": between 1 and 9 broker nodes fit the port plan of make run.");
            System.exit(2);
        }
        boolean cluster = opts.containsKey("redis-cluster") || nodes > 1;
        Path jar = Path.of(opts.getOrDefault("broker-jar", "broker/target/quarkus-app/quarkus-run.jar")).toAbsolutePath();
        boolean withBroker = !opts.containsKey("no-broker");
        if (withBroker) {
            checkPortsFree(nodes);
        }

        // A fresh Kafka/Redis each run: evaluation state should not surprise the next run.
        deleteRecursively(dir.resolve("stack"));
        LocalStack.Builder builder = LocalStack.builder(dir.resolve("stack")).kafka();
        builder = cluster ? builder.redisCluster(3) : builder.redis();
        System.out.println("Starting Kafka (KRaft) and " + (cluster ? "a 3-master Redis Cluster" : "Redis") + " ...");
        LocalStack stack = builder.start();

        String password = null;
        Certificates certs = null;
        if (withBroker) {
            password = devPassword(dir);
            Path credentials = writeCredentials(dir, jar, password);
            certs = Files.isExecutable(Path.of("/usr/bin/openssl")) ? new Certificates(dir.resolve("tls")).ensureServer() : null;
            for (int i = 0; i < nodes; i++) {
                BrokerNode node = new BrokerNode("node-" + i, jar, dir.resolve("node-" + i),
                        TCP_BASE + i, TLS_BASE + i, WS_BASE + 10 * i, WSS_BASE + 10 * i, HTTP_BASE + i);
                node.config("tbmq.security.credentials-file", credentials.toString());
                node.config("tbmq.security.allow-anonymous", Boolean.toString(opts.containsKey("anonymous")));
                node.config("tbmq.listeners.tcp.host", "0.0.0.0");
                node.config("tbmq.listeners.ws.host", "0.0.0.0");
                if (certs != null) {
                    for (String listener : List.of("tls", "wss")) {
                        node.config("tbmq.listeners." + listener + ".enabled", "true");
                        node.config("tbmq.listeners." + listener + ".host", "0.0.0.0");
                        node.config("tbmq.listeners." + listener + ".cert", certs.serverCert().toString());
                        node.config("tbmq.listeners." + listener + ".key", certs.serverKey().toString());
                    }
                }
                for (String setting : settings) {
                    int eq = setting.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--set needs KEY=VALUE, got " + setting);
                    }
                    node.config(setting.substring(0, eq), setting.substring(eq + 1));
                }
                System.out.println("Starting broker " + node.nodeId() + " ...");
                stack.startBroker(node);
            }
        }
        printBanner(stack, password, certs, opts.containsKey("anonymous"));
        watch(stack);
    }

    private static void printBanner(LocalStack stack, String password, Certificates certs, boolean anonymous) {
        StringBuilder b = new StringBuilder("\n");
        b.append("TBMQ local stack is up. Ctrl-C stops everything.\n");
        b.append("  Kafka      ").append(stack.kafka().bootstrapServers()).append('\n');
        stack.redis().ifPresent(r -> b.append("  Redis      ").append(r.address()).append('\n'));
        stack.redisCluster().ifPresent(r -> b.append("  Redis      cluster ").append(r.addresses()).append('\n'));
        for (BrokerNode n : stack.brokers()) {
            b.append("  Broker ").append(n.nodeId()).append(": mqtt://localhost:").append(n.mqttPort())
                    .append("  ws://localhost:").append(n.wsPort()).append("/mqtt");
            if (certs != null) {
                b.append("  mqtts://localhost:").append(n.tlsPort()).append("  wss://localhost:").append(n.wssPort()).append("/mqtt");
            }
            b.append("  health http://localhost:").append(n.httpPort()).append("/q/health  metrics /q/metrics\n");
        }
        if (!stack.brokers().isEmpty()) {
            b.append("\n  Username: ").append(USER).append("   Password: ").append(password);
            if (anonymous) {
                b.append("   (anonymous clients allowed too)");
            }
            b.append('\n');
            if (certs != null) {
                b.append("  TLS CA certificate: ").append(certs.caCert()).append('\n');
            }
            int port = stack.broker(0).mqttPort();
            b.append("\n  Try it:\n");
            b.append("    mosquitto_sub -h localhost -p ").append(port).append(" -u ").append(USER).append(" -P ")
                    .append(password).append(" -V mqttv5 -q 1 -t 'demo/#' -v &\n");
            b.append("    mosquitto_pub -h localhost -p ").append(port).append(" -u ").append(USER).append(" -P ")
                    .append(password).append(" -V mqttv5 -q 1 -t demo/hello -m 'hello'\n");
            if (certs != null) {
                b.append("    mosquitto_pub -h localhost -p ").append(stack.broker(0).tlsPort()).append(" --cafile ")
                        .append(certs.caCert()).append(" -u ").append(USER).append(" -P ").append(password)
                        .append(" -t demo/tls -m 'over TLS'\n");
            }
        }
        System.out.println(b);
        System.out.flush();
    }

    /**
     * Blocks until Ctrl-C (the shutdown hook stops every process), until a child dies, or until
     * the parent (make) is gone: `timeout make run` or a killed terminal must not orphan the stack.
     */
    private static void watch(LocalStack stack) throws InterruptedException {
        ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
        while (true) {
            TimeUnit.SECONDS.sleep(1);
            if (parent != null && !parent.isAlive()) {
                System.err.println("parent process ended; stopping the stack.");
                System.exit(0);
            }
            List<BrokerNode> brokers = stack.brokers();
            for (BrokerNode n : brokers) {
                if (n.process().isAlive()) {
                    continue;
                }
                if (brokers.size() == 1) {
                    System.err.println("broker " + n.nodeId() + " exited (code " + n.process().exitCode() + "), see "
                            + n.process().log() + "; stopping the stack.");
                    System.exit(1);
                }
                // In a cluster the others carry on, and a node that died (kill -9 to try failover) comes back.
                System.err.println("broker " + n.nodeId() + " exited (code " + n.process().exitCode() + "); the other nodes "
                        + "take over its clients. Restarting it ...");
                try {
                    n.restart(Duration.ofMinutes(2));
                    System.err.println("broker " + n.nodeId() + " is back.");
                } catch (RuntimeException e) {
                    System.err.println("broker " + n.nodeId() + " did not come back (" + e.getMessage() + "); stopping the stack.");
                    System.exit(1);
                }
            }
            if (!stack.kafka().process().isAlive()) {
                System.err.println("Kafka exited, see " + stack.kafka().process().log() + "; stopping the stack.");
                System.exit(1);
            }
        }
    }

    private static void checkPortsFree(int nodes) {
        List<String> busy = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            for (int port : new int[] {TCP_BASE + i, TLS_BASE + i, WS_BASE + 10 * i, WSS_BASE + 10 * i, HTTP_BASE + i}) {
                if (!Ports.bindable(port)) {
                    busy.add(Integer.toString(port));
                }
            }
        }
        if (!busy.isEmpty()) {
            throw new IllegalStateException("ports already in use: " + String.join(", ", busy)
                    + " (is another `make run` or MQTT broker running?)");
        }
    }

    /** The evaluation password: random on first run, then kept in DIR/dev-password. */
    private static String devPassword(Path dir) throws IOException {
        Path file = dir.resolve("dev-password");
        if (Files.exists(file)) {
            return Files.readString(file).trim();
        }
        byte[] random = new byte[9];
        new SecureRandom().nextBytes(random);
        String password = HexFormat.of().formatHex(random);
        Files.createDirectories(dir);
        Files.writeString(file, password + "\n");
        return password;
    }

    /** Hashes the password with the broker's own tool and writes a credentials file with one full-access user. */
    private static Path writeCredentials(Path dir, Path jar, String password) throws IOException, InterruptedException {
        Path file = dir.resolve("credentials.yaml");
        Process p = new ProcessBuilder(Tools.java(), "-jar", jar.toString(), "hash-password")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        p.getOutputStream().write((password + "\n").getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String hash = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0 || hash.isEmpty()) {
            throw new IllegalStateException("could not hash the dev password with " + jar);
        }
        Files.writeString(file, String.join("\n",
                "# Written by `make run`: one user with full access. Hashes come from `make passwd`.",
                "users:",
                "  - username: " + USER,
                "    password: \"" + hash + "\"",
                "    publish: [\"#\"]",
                "    subscribe: [\"#\"]",
                ""));
        return file;
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (var walk = Files.walk(path)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static Map<String, String> parse(String[] args, List<String> settings) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String key = a.substring(2);
            if (key.equals("set") && i + 1 < args.length) {
                settings.add(args[++i]);
                continue;
            }
            if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                opts.put(key, args[++i]);
            } else {
                opts.put(key, "true");
            }
        }
        return opts;
    }

}
