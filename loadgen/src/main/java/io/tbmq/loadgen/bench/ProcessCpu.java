package io.tbmq.loadgen.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** CPU time of a process, or of its JIT compiler threads, from /proc (user + system), in seconds. */
final class ProcessCpu {
    private static final double TICKS_PER_SECOND = 100.0; // USER_HZ, 100 on Linux x86_64
    private static final Path PROC = Path.of("/proc");

    private ProcessCpu() {
    }

    /** All threads of the process. */
    static double seconds(long pid) {
        return ticks(PROC.resolve(Long.toString(pid)).resolve("stat")) / TICKS_PER_SECOND;
    }

    /**
     * CPU seconds of each JIT compiler thread of a HotSpot JVM (C1 and C2 CompilerThread, by thread
     * id), so that a measured window can tell the broker's work from its compiling. Empty for a
     * process that has none (Redis, mosquitto). HotSpot starts and stops compiler threads as the
     * queue grows and shrinks, hence a snapshot per thread: {@link #compilerDelta} adds only what
     * threads did between two snapshots.
     */
    static Map<String, Double> compilerThreads(long pid) {
        return compilerThreads(PROC, pid);
    }

    static Map<String, Double> compilerThreads(Path proc, long pid) {
        Map<String, Double> threads = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(proc.resolve(Long.toString(pid)).resolve("task"))) {
            for (Path task : tasks) {
                String name;
                try {
                    name = Files.readString(task.resolve("comm")).trim();
                } catch (IOException ended) {
                    continue;
                }
                // The kernel keeps 15 characters of "C2 CompilerThread0".
                if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
                    double ticks = ticks(task.resolve("stat"));
                    if (!Double.isNaN(ticks)) {
                        threads.put(task.getFileName().toString(), ticks / TICKS_PER_SECOND);
                    }
                }
            }
        } catch (IOException e) {
            // The process is gone: nothing to count.
        }
        return threads;
    }

    /** Compiler CPU seconds between two snapshots: threads in both, and threads started since (a thread that stopped is lost). */
    static double compilerDelta(Map<String, Double> before, Map<String, Double> after) {
        double total = 0;
        for (Map.Entry<String, Double> t : after.entrySet()) {
            total += t.getValue() - before.getOrDefault(t.getKey(), 0.0);
        }
        return total;
    }

    /** utime + stime of a /proc stat file, in ticks; NaN when it cannot be read. */
    private static double ticks(Path stat) {
        try {
            String text = Files.readString(stat);
            // Fields after the command name, which is in parentheses and may contain spaces.
            String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
