package io.tbmq.loadgen.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU time of a process from /proc/PID/stat (user + system, all threads), in seconds. */
final class ProcessCpu {
    private static final double TICKS_PER_SECOND = 100.0; // USER_HZ, 100 on Linux x86_64

    private ProcessCpu() {
    }

    static double seconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // Fields after the command name, which is in parentheses and may contain spaces.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
        } catch (IOException e) {
            return Double.NaN;
        }
    }
}
