package io.tbmq.localstack;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A child process started by the local stack: its name, PID and log file. It is stopped by PID
 * only (SIGTERM, then SIGKILL after a grace period), never by name.
 */
public final class ManagedProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    ManagedProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: a crash, as fault-injection tests need. */
    public void kill() {
        process.destroyForcibly();
        waitFor(Duration.ofSeconds(10));
    }

    /** SIGSTOP / SIGCONT: the process hangs without dying, as a network partition looks to peers. */
    public void suspend() {
        signal("STOP");
    }

    public void resume() {
        signal("CONT");
    }

    /** Stops gracefully (SIGTERM), forcibly after {@code grace}. */
    public void stop(Duration grace) {
        if (!process.isAlive()) {
            return;
        }
        resume();
        process.destroy();
        if (!waitFor(grace)) {
            process.destroyForcibly();
            waitFor(Duration.ofSeconds(10));
        }
    }

    public int exitCode() {
        return process.exitValue();
    }

    public boolean waitFor(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void signal(String signal) {
        if (!process.isAlive()) {
            return;
        }
        try {
            new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .inheritIO().start().waitFor(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not send SIG" + signal + " to " + name, e);
        }
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(15));
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ", log " + log + ")";
    }
}
