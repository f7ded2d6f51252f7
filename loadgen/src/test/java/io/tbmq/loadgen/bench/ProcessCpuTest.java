package io.tbmq.loadgen.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessCpuTest {
    @TempDir
    Path proc;

    /** A thread of process 42 in a made-up /proc, with utime and stime in ticks (fields 14 and 15). */
    private void thread(String tid, String name, long utime, long stime) throws IOException {
        Path task = Files.createDirectories(proc.resolve("42/task").resolve(tid));
        Files.writeString(task.resolve("comm"), name + "\n");
        Files.writeString(task.resolve("stat"),
                tid + " (" + name + ") S 1 42 42 0 -1 4194368 100 0 0 0 " + utime + " " + stime + " 0 0 20 0 30 0 12345 0 0\n");
    }

    @Test
    void countsOnlyTheJitCompilerThreads() throws IOException {
        thread("100", "C2 CompilerThre", 250, 50);
        thread("101", "C1 CompilerThre", 40, 10);
        thread("102", "mqtt-io-9-1", 9_000, 3_000);
        thread("103", "java", 500, 100);

        Map<String, Double> threads = ProcessCpu.compilerThreads(proc, 42);

        assertThat(threads).containsOnlyKeys("100", "101");
        assertThat(threads.get("100")).isCloseTo(3.0, within(1e-9));
        assertThat(threads.get("101")).isCloseTo(0.5, within(1e-9));
    }

    @Test
    void aProcessWithoutCompilerThreadsOrGoneHasNone() throws IOException {
        thread("7", "redis-server", 900, 100);

        assertThat(ProcessCpu.compilerThreads(proc, 42)).isEmpty();
        assertThat(ProcessCpu.compilerThreads(proc, 43)).isEmpty();
    }

    @Test
    void theDeltaCountsThreadsStartedSinceAndIgnoresThoseThatStopped() {
        Map<String, Double> before = Map.of("100", 3.0, "101", 0.5, "104", 7.0);
        Map<String, Double> after = Map.of("100", 4.25, "101", 0.5, "105", 0.75);

        // 100 compiled 1.25 s, 101 nothing, 105 started and compiled 0.75 s; 104 stopped (its time is not counted twice or negatively).
        assertThat(ProcessCpu.compilerDelta(before, after)).isCloseTo(2.0, within(1e-9));
    }
}
