package io.tbmq.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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
 * would refuse it anyway. If the recorder dies before it is ready, the next start records; if the
 * cache cannot be made, brokers of this JVM start without one.
 *
 * <p>Off unless the system property {@value #PROPERTY} names the cache file: the benchmarks and
 * {@code make run} start brokers exactly as users do.
 */
final class StartupCache {
    static final String PROPERTY = "tbmq.broker.startup-cache";
    private static final Map<Path, StartupCache> BY_FILE = new ConcurrentHashMap<>();
    private static final Duration CREATION_TIMEOUT = Duration.ofMinutes(3);

    private final Path cache;
    private final Path record;
    private final Path jar;
    private Object claimant;
    private List<String> recordedWith = List.of();
    private ManagedProcess recorder;
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
     * (while nobody else does), or nothing.
     */
    synchronized List<String> options(Object starter, List<String> jvmOptions) {
        if (failed) {
            return List.of();
        }
        if (current(cache)) {
            return List.of("-XX:AOTCache=" + cache);
        }
        if (recorder != null && !recorder.isAlive()) {
            claimant = null;
            recorder = null;
        }
        if (claimant == null || claimant == starter && recorder == null) {
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

    /** Called once that broker is ready: a recorder's recording ends here and becomes the cache. */
    synchronized void ready(Object starter) {
        if (starter != claimant || recorder == null) {
            return;
        }
        try {
            if (endRecording(recorder.pid())) {
                create(recordedWith);
            } else {
                failed = true;
            }
        } finally {
            claimant = null;
            recorder = null;
            delete(record);
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
        try {
            return Files.isRegularFile(file) && Files.getLastModifiedTime(file).compareTo(Files.getLastModifiedTime(jar)) >= 0;
        } catch (IOException e) {
            return false;
        }
    }

    private void create(List<String> jvmOptions) {
        Path written = cache.resolveSibling(cache.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        List<String> command = new ArrayList<>(List.of(Tools.java()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-XX:AOTMode=create", "-XX:AOTConfiguration=" + record, "-XX:AOTCache=" + written,
                "-jar", jar.toString()));
        ManagedProcess creation = ProcessLauncher.get().start("broker-startup-cache", command, cache.getParent(), Map.of());
        try {
            if (creation.waitFor(CREATION_TIMEOUT) && creation.exitCode() == 0 && Files.isRegularFile(written)) {
                Files.move(written, cache, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } else {
                failed = true;
                System.err.printf("brokers start without a startup cache: its creation failed, see %s%n", creation.log());
            }
        } catch (IOException e) {
            failed = true;
            System.err.printf("brokers start without a startup cache: %s%n", e);
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
