package io.tbmq.localstack;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One broker process (the packaged Quarkus application) with its own listener ports. Its
 * configuration is passed as system properties, the same keys as application.properties.
 */
public final class BrokerNode implements AutoCloseable {
    private final String nodeId;
    private final Path jar;
    private final Path dir;
    private final int mqttPort;
    private final int tlsPort;
    private final int wsPort;
    private final int wssPort;
    private final int httpPort;
    private final Map<String, String> config = new LinkedHashMap<>();
    private final List<String> jvmOptions = new ArrayList<>();
    private final Optional<StartupCache> startupCache;
    private ManagedProcess process;

    public BrokerNode(String nodeId, Path jar, Path dir, int mqttPort, int tlsPort, int wsPort, int wssPort, int httpPort) {
        this.nodeId = nodeId;
        this.jar = jar;
        this.dir = dir;
        this.mqttPort = mqttPort;
        this.tlsPort = tlsPort;
        this.wsPort = wsPort;
        this.wssPort = wssPort;
        this.httpPort = httpPort;
        this.startupCache = StartupCache.configured(jar);
        config.put("tbmq.node-id", nodeId);
        config.put("tbmq.listeners.tcp.port", Integer.toString(mqttPort));
        config.put("tbmq.listeners.tls.port", Integer.toString(tlsPort));
        config.put("tbmq.listeners.ws.port", Integer.toString(wsPort));
        config.put("tbmq.listeners.wss.port", Integer.toString(wssPort));
        config.put("quarkus.http.port", Integer.toString(httpPort));
        config.put("quarkus.http.host", "127.0.0.1");
    }

    /** A node on free ports. */
    public static BrokerNode onFreePorts(String nodeId, Path jar, Path dir) {
        return new BrokerNode(nodeId, jar, dir, Ports.free(), Ports.free(), Ports.free(), Ports.free(), Ports.free());
    }

    public BrokerNode config(String key, String value) {
        config.put(key, value);
        return this;
    }

    public BrokerNode config(Map<String, String> values) {
        config.putAll(values);
        return this;
    }

    public BrokerNode jvmOption(String option) {
        jvmOptions.add(option);
        return this;
    }

    public String nodeId() {
        return nodeId;
    }

    public int mqttPort() {
        return mqttPort;
    }

    public int tlsPort() {
        return tlsPort;
    }

    public int wsPort() {
        return wsPort;
    }

    public int wssPort() {
        return wssPort;
    }

    public int httpPort() {
        return httpPort;
    }

    public String mqttUri() {
        return "tcp://127.0.0.1:" + mqttPort;
    }

    public ManagedProcess process() {
        return process;
    }

    public Path log() {
        return dir.resolve("broker-" + nodeId + ".log");
    }

    public BrokerNode start(Duration timeout) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("broker not built: " + jar + " is missing (run `make build`)");
        }
        List<String> jvm = new ArrayList<>(List.of("-Xms128m", "-Xmx1g"));
        if (jvmOptions.stream().noneMatch(o -> o.startsWith("-XX:+Use") && o.endsWith("GC"))) {
            jvm.add("-XX:+UseG1GC");
        }
        if (Runtime.version().feature() >= 23) {
            // Netty still uses sun.misc.Unsafe memory access; allowed explicitly so JDK 23+ does not warn.
            jvm.add("--sun-misc-unsafe-memory-access=allow");
        }
        jvm.addAll(jvmOptions);
        List<String> cmd = new ArrayList<>(List.of(Tools.java()));
        cmd.addAll(jvm);
        startupCache.ifPresent(cache -> cmd.addAll(cache.options(this, jvm)));
        config.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.addAll(List.of("-jar", jar.toString()));
        try {
            process = ProcessLauncher.get().start("broker-" + nodeId, cmd, dir, Map.of());
            startupCache.ifPresent(cache -> cache.started(this, process));
            awaitReady(timeout);
        } catch (RuntimeException e) {
            startupCache.ifPresent(cache -> cache.abandoned(this));
            throw e;
        }
        startupCache.ifPresent(cache -> cache.ready(this));
        return this;
    }

    /** Readiness as Kubernetes sees it: {@code /q/health/ready} answers 200. */
    public boolean ready() {
        return status("/q/health/ready") == 200;
    }

    public int status(String path) {
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
                    .timeout(Duration.ofSeconds(2)).build();
            return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    public String get(String path) {
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
                    .timeout(Duration.ofSeconds(5)).build();
            return client.send(request, HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new IllegalStateException("GET " + path + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public void awaitReady(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("broker " + nodeId + " exited during start, see " + process.log());
            }
            if (ready()) {
                return;
            }
            KafkaNode.sleep(100);
        }
        throw new IllegalStateException("broker " + nodeId + " not ready within " + timeout + ", see " + process.log());
    }

    public void stop(Duration grace) {
        if (process != null) {
            process.stop(grace);
        }
    }

    public void kill() {
        if (process != null) {
            process.kill();
        }
    }

    public void restart(Duration timeout) {
        stop(Duration.ofSeconds(30));
        start(timeout);
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(30));
    }
}
