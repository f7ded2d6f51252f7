package io.tbmq.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's ahead-of-time cache of the broker's classes (JEP 483 and 514), for test harnesses that
 * start a broker a hundred times from one build: classes come loaded and linked from the cache
 * instead of being read, verified and linked again at every start. Measured on a 2-core machine,
 * an idle broker was ready in about 7.5 s instead of 10.5 s.
 *
 * <p>The first broker started without a current cache records the classes it loads until it is
 * ready; then the recording is ended ({@code jcmd AOT.end_recording}, so a broker that runs until
 * the end of the tests serves as well) and turned into the cache, once: one JVM run of a few
 * seconds, written beside the cache and moved into place, so a broker still mapping an older file
 * is not disturbed. Every later start maps it. A cache older than the jar is not used, as the JDK
 * would refuse it anyway, and so is one older than the JDK. If the recorder's start fails, the next
 * start records; if the cache cannot be made, brokers of this JVM start without one.
 *
 * <p>Off unless the system property {@value #PROPERTY} names the cache file: the benchmarks and
 * {@code make run} start brokers exactly as users do.
 */
final class StartupCache {
    static final String PROPERTY = "tbmq.broker.startup-cache";
    private static final Map<Path, StartupCache> BY_FILE = new ConcurrentHashMap<>();
    private static final Duration CREATION_TIMEOUT = Duration.ofMinutes(3);
    /** The JDK's class library: a JDK installed after the cache was made refuses it. */
    private static final Path JDK_MODULES = Path.of(Tools.java()).getParent().getParent().resolve("lib").resolve("modules");

    private final Path cache;
    private final Path record;
    private final Path jar;
    private Object claimant;
    private List<String> recordedWith = List.of();
    private ManagedProcess recorder;
    private boolean creating;
    private boolean failed;

    StartupCache(Path cache, Path jar) {
        this.cache = cache.toAbsolutePath();
        this.record = this.cache.resolveSibling(this.cache.getFileName() + ".record");
        this.jar = jar.toAbsolutePath();
    }

    /** The cache the system property names for this jar, if any and if the JDK has AOT caches (25 and later). */
    static Optional<StartupCache> configured(Path jar) {
        String file = System.getProperty(PROPERTY, "");
        if (file.isBlank() || Runtime.version().feature() < 25) {
            return Optional.empty();
        }
        return Optional.of(BY_FILE.computeIfAbsent(Path.of(file).toAbsolutePath(), f -> new StartupCache(f, jar)));
    }

    /**
     * The options for a broker about to start with {@code jvmOptions}: use the cache, record it
     * (while nobody else does), or nothing (while it is made, after it could not be, or for a
     * broker whose JVM options differ from the recorder's, which the cache may not fit).
     */
    synchronized List<String> options(Object starter, List<String> jvmOptions) {
        if (failed || creating) {
            return List.of();
        }
        if (current(cache)) {
            return recordedWith.isEmpty() || recordedWith.equals(jvmOptions) ? List.of("-XX:AOTCache=" + cache) : List.of();
        }
        if (recorder != null && !recorder.isAlive()) {
            claimant = null;
            recorder = null;
        }
        if (claimant == null) {
            claimant = starter;
            recordedWith = List.copyOf(jvmOptions);
            delete(record);
            return List.of("-XX:AOTMode=record", "-XX:AOTConfiguration=" + record);
        }
        return List.of();
    }

    /** Called once the broker that got {@link #options} runs as {@code process}. */
    synchronized void started(Object starter, ManagedProcess process) {
        if (starter == claimant) {
            recorder = process;
        }
    }

    /** Called when that broker's start failed: the next start records instead. */
    synchronized void abandoned(Object starter) {
        if (starter == claimant) {
            claimant = null;
            recorder = null;
        }
    }

    /**
     * Called once that broker is ready: a recorder's recording ends here and becomes the cache.
     * Never throws: a broker that is up stays up, and the others start without a cache. The
     * slow part runs outside the lock, so other brokers start meanwhile, without the cache.
     */
    void ready(Object starter) {
        ManagedProcess recording;
        List<String> options;
        synchronized (this) {
            if (starter != claimant || recorder == null) {
                return;
            }
            recording = recorder;
            options = recordedWith;
            creating = true;
        }
        boolean made = false;
        try {
            made = endRecording(recording.pid()) && create(options);
        } catch (RuntimeException e) {
            System.err.printf("brokers start without a startup cache: %s%n", e);
        } finally {
            delete(record);
            synchronized (this) {
                creating = false;
                failed = !made;
                claimant = null;
                recorder = null;
            }
        }
    }

    private boolean endRecording(long pid) {
        Path jcmd = Path.of(Tools.java()).resolveSibling("jcmd");
        Path answer = cache.resolveSibling("broker-startup-cache-jcmd.log");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "AOT.end_recording")
                    .redirectErrorStream(true).redirectOutput(answer.toFile()).start();
            if (p.waitFor(1, TimeUnit.MINUTES) && p.exitValue() == 0 && Files.isRegularFile(record)) {
                return true;
            }
            p.destroyForcibly();
            System.err.printf("brokers start without a startup cache: %s AOT.end_recording failed, see %s%n", jcmd, answer);
            return false;
        } catch (IOException e) {
            System.err.printf("brokers start without a startup cache: %s%n", e);
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean current(Path file) {
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try {
            FileTime made = Files.getLastModifiedTime(file);
            return made.compareTo(Files.getLastModifiedTime(jar)) >= 0 && (!Files.isRegularFile(JDK_MODULES)
                    || made.compareTo(Files.getLastModifiedTime(JDK_MODULES)) >= 0);
        } catch (IOException e) {
            return false;
        }
    }

    private boolean create(List<String> jvmOptions) {
        Path written = cache.resolveSibling(cache.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        List<String> command = new ArrayList<>(List.of(Tools.java()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-XX:AOTMode=create", "-XX:AOTConfiguration=" + record, "-XX:AOTCache=" + written,
                "-jar", jar.toString()));
        ManagedProcess creation = ProcessLauncher.get().start("broker-startup-cache", command, cache.getParent(), Map.of());
        try {
            if (creation.waitFor(CREATION_TIMEOUT) && creation.exitCode() == 0 && Files.isRegularFile(written)) {
                Files.move(written, cache, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                return true;
            }
            System.err.printf("brokers start without a startup cache: its creation failed, see %s%n", creation.log());
            return false;
        } catch (IOException e) {
            System.err.printf("brokers start without a startup cache: %s%n", e);
            return false;
        } finally {
            creation.stop(Duration.ofSeconds(5));
            ProcessLauncher.get().forget(creation);
            delete(written);
        }
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // A leftover is harmless: the next creation replaces it.
        }
    }
}
