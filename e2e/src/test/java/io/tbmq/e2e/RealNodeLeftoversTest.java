package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How e2e/real-node/leftovers.sh judges what a run of the real node left behind, which decides whether
 * {@code make cluster-up} refuses (a node is up), cleans up first (the last run was cut short by a reboot or a
 * killed session, as on the machine where a CI run found its predecessor's PID files) or just starts.
 */
class RealNodeLeftoversTest {
    private static final Path SCRIPT = Path.of(System.getProperty("tbmq.repo", ".."))
            .resolve("e2e/real-node/leftovers.sh").toAbsolutePath().normalize();

    @TempDir
    Path root;
    private Process sleeper;

    @AfterEach
    void stopSleeper() {
        if (sleeper != null) {
            sleeper.destroyForcibly();
        }
    }

    @Test
    void nothingRecordedIsNone() throws Exception {
        assertThat(leftovers()).isEqualTo("none");
    }

    @Test
    void pidFilesOfProcessesThatAreGoneAreStale() throws Exception {
        Process done = new ProcessBuilder("true").start();
        done.waitFor(10, TimeUnit.SECONDS);
        record("kube-apiserver", done.pid(), Path.of("/usr/bin/true"));
        assertThat(leftovers()).isEqualTo("stale");
    }

    @Test
    void aRecordedProcessStillRunningIsReportedByNameAndPid() throws Exception {
        sleeper = new ProcessBuilder("sleep", "300").start();
        record("etcd", sleeper.pid(), Path.of("/usr/bin/sleep"));
        Process done = new ProcessBuilder("true").start();
        done.waitFor(10, TimeUnit.SECONDS);
        record("kubelet", done.pid(), Path.of("/usr/bin/true"));
        assertThat(leftovers()).isEqualTo("running etcd(" + sleeper.pid() + ")");
    }

    @Test
    void aPidNowHeldByAnotherProgramIsNotTheNode() throws Exception {
        sleeper = new ProcessBuilder("sleep", "300").start();
        record("kube-apiserver", sleeper.pid(), root.resolve("bin/kube-apiserver"));
        assertThat(leftovers()).isEqualTo("stale");
    }

    private void record(String name, long pid, Path executable) throws IOException {
        Path run = Files.createDirectories(root.resolve("run"));
        String exe = Files.exists(executable) ? executable.toRealPath().toString() : executable.toString();
        Files.writeString(run.resolve(name + ".pid"), pid + "\n");
        Files.writeString(run.resolve(name + ".exe"), exe + "\n");
    }

    private String leftovers() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", SCRIPT.toString()).redirectErrorStream(true);
        pb.environment().put("REAL_NODE_ROOT", root.toString());
        pb.environment().remove("RUN");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
