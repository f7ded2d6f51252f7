package io.tbmq.localstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StartupCacheTest {
    private static final List<String> JVM = List.of("-Xmx1g");

    @TempDir
    Path dir;

    private Path jar(Instant built) throws Exception {
        Path jar = Files.writeString(dir.resolve("quarkus-run.jar"), "jar");
        Files.setLastModifiedTime(jar, FileTime.from(built));
        return jar;
    }

    private ManagedProcess process(String... command) {
        return ProcessLauncher.get().start("startup-cache-test", List.of(command), dir, Map.of());
    }

    @Test
    void withoutACacheOneBrokerRecordsAndTheOthersStartPlainUntilItsStartFails() throws Exception {
        StartupCache cache = new StartupCache(dir.resolve("broker.aot"), jar(Instant.now()));
        Object first = new Object();
        Object second = new Object();

        assertThat(cache.options(first, JVM)).containsExactly("-XX:AOTMode=record",
                "-XX:AOTConfiguration=" + dir.resolve("broker.aot.record").toAbsolutePath());
        assertThat(cache.options(second, JVM)).as("one recorder at a time").isEmpty();
        cache.abandoned(first);
        assertThat(cache.options(second, JVM)).as("the recorder's start failed").contains("-XX:AOTMode=record");
    }

    @Test
    void aRecorderThatDiedIsReplaced() throws Exception {
        StartupCache cache = new StartupCache(dir.resolve("broker.aot"), jar(Instant.now()));
        Object first = new Object();
        cache.options(first, JVM);
        ManagedProcess died = process("true");
        cache.started(first, died);
        assertThat(died.waitFor(Duration.ofSeconds(10))).isTrue();

        assertThat(cache.options(new Object(), JVM)).contains("-XX:AOTMode=record");
    }

    @Test
    void aRecordingThatCannotBeEndedFailsNoStartAndLeavesTheOthersPlain() throws Exception {
        StartupCache cache = new StartupCache(dir.resolve("broker.aot"), jar(Instant.now()));
        Object first = new Object();
        cache.options(first, JVM);
        // Not a JVM: jcmd cannot end a recording there.
        ManagedProcess notAJvm = process("sleep", "60");
        try {
            cache.started(first, notAJvm);
            cache.ready(first);

            assertThat(notAJvm.isAlive()).as("the broker that is up stays up").isTrue();
            assertThat(cache.options(new Object(), JVM)).as("no second try in this JVM").isEmpty();
            assertThat(dir.resolve("broker.aot")).doesNotExist();
        } finally {
            notAJvm.stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void aCacheNewerThanTheJarIsUsedAndAnOlderOneIsNot() throws Exception {
        Instant built = Instant.now().minusSeconds(60);
        StartupCache cache = new StartupCache(dir.resolve("broker.aot"), jar(built));
        Path file = Files.writeString(dir.resolve("broker.aot"), "cache");

        Files.setLastModifiedTime(file, FileTime.from(built.plusSeconds(1)));
        assertThat(cache.options(new Object(), JVM)).containsExactly("-XX:AOTCache=" + file.toAbsolutePath());

        Files.setLastModifiedTime(file, FileTime.from(built.minusSeconds(1)));
        assertThat(cache.options(new Object(), JVM)).as("made from an earlier build").contains("-XX:AOTMode=record");
    }
}
