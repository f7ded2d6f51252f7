package io.tbmq.loadgen.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.tbmq.localstack.ManagedProcess;
import io.tbmq.localstack.Ports;
import io.tbmq.localstack.ProcessLauncher;
import io.tbmq.localstack.Tools;

/** Debian's mosquitto, the peer of the benchmark: password authentication, no persistence, same limits. */
final class Mosquitto implements AutoCloseable {
    private final int port = Ports.free();
    private final ManagedProcess process;

    Mosquitto(Path dir, String user, String password) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path passwd = dir.resolve("passwd");
        Process p = new ProcessBuilder(Tools.require("mosquitto_passwd", "mosquitto").toString(), "-c", "-b",
                passwd.toString(), user, password).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("mosquitto_passwd failed: " + new String(p.getInputStream().readAllBytes()));
        }
        Path conf = dir.resolve("mosquitto.conf");
        Files.writeString(conf, String.join("\n",
                "listener " + port + " 127.0.0.1",
                "allow_anonymous false",
                "password_file " + passwd,
                "persistence false",
                "max_queued_messages 1000",
                "max_inflight_messages 128",
                "log_type error",
                ""));
        Path binary = Tools.find("mosquitto").orElse(Path.of("/usr/sbin/mosquitto"));
        process = ProcessLauncher.get().start("mosquitto", List.of(binary.toString(), "-c", conf.toString()), dir, Map.of());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Ports.bindable(port) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        if (!process.isAlive()) {
            throw new IllegalStateException("mosquitto did not start, see " + process.log());
        }
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.stop(Duration.ofSeconds(10));
    }
}
