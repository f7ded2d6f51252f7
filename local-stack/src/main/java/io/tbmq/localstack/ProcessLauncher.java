package io.tbmq.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Starts child processes so that none outlives this JVM.
 *
 * <p>Three layers: a shutdown hook stops every child by PID on a normal exit or Ctrl-C; every
 * child is started under {@code setpriv --pdeathsig KILL} from one long-lived spawner thread, so
 * the kernel kills it if this JVM dies by SIGKILL (the death signal fires when the spawning
 * <em>thread</em> ends, hence the single thread that lives as long as the JVM); and the PID of
 * each child is appended to {@code pids} in its run directory for inspection.
 */
public final class ProcessLauncher {
    private static final ProcessLauncher INSTANCE = new ProcessLauncher();
    private static final boolean SETPRIV = Files.isExecutable(Path.of("/usr/bin/setpriv"));

    private final ExecutorService spawner = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "local-stack-spawner");
        t.setDaemon(true);
        return t;
    });
    private final List<ManagedProcess> children = Collections.synchronizedList(new ArrayList<>());

    private ProcessLauncher() {
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopAll, "local-stack-shutdown"));
    }

    public static ProcessLauncher get() {
        return INSTANCE;
    }

    public ManagedProcess start(String name, List<String> command, Path workDir, Map<String, String> env) {
        try {
            Files.createDirectories(workDir);
            Path log = workDir.resolve(name + ".log");
            List<String> full = new ArrayList<>();
            if (SETPRIV) {
                full.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL"));
            }
            full.addAll(command);
            ProcessBuilder builder = new ProcessBuilder(full)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(env);
            Process process = spawner.submit(builder::start).get();
            ManagedProcess managed = new ManagedProcess(name, process, log);
            children.add(managed);
            Files.writeString(workDir.resolve("pids"), name + " " + process.pid() + "\n",
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            return managed;
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not start " + name + ": " + e.getCause().getMessage(), e.getCause());
        } catch (IOException e) {
            throw new IllegalStateException("could not start " + name + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting " + name, e);
        }
    }

    void forget(ManagedProcess process) {
        children.remove(process);
    }

    private void stopAll() {
        List<ManagedProcess> snapshot;
        synchronized (children) {
            snapshot = new ArrayList<>(children);
        }
        Collections.reverse(snapshot);
        for (ManagedProcess p : snapshot) {
            p.stop(Duration.ofSeconds(10));
        }
    }
}
