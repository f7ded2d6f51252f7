package io.tbmq.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps the broker's packages pointing one way: what each package of the main sources names of
 * another (imports and fully qualified names), read from the sources.
 */
class PackageDependenciesTest {
    private static final Path SOURCES = Path.of("src/main/java/io/tbmq/broker");
    private static final Pattern REFERENCE = Pattern.compile("io\\.tbmq\\.broker\\.([a-z][a-z0-9.]*?)\\.[A-Z]");
    private static Map<String, Set<String>> uses;

    @BeforeAll
    static void readSources() throws IOException {
        uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(PackageDependenciesTest::read);
        }
    }

    private static void read(Path file) {
        String pkg = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
        try {
            Matcher m = REFERENCE.matcher(Files.readString(file));
            Set<String> used = uses.computeIfAbsent(pkg, p -> new TreeSet<>());
            while (m.find()) {
                if (!m.group(1).equals(pkg)) {
                    used.add(m.group(1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theRecordFormatsAndTheLogSeamDependOnNothingElseOfTheBroker() {
        assertThat(uses).containsKeys("record", "log");
        assertThat(uses.get("record")).as("packages the record formats use").isEmpty();
        assertThat(uses.get("log")).as("packages the log seam uses").isEmpty();
    }

    @Test
    void theKafkaAdapterIsUsedOnlyWhereTheBrokerIsWired() {
        assertThat(uses).containsKey("kafka");
        assertThat(uses.entrySet()).filteredOn(e -> e.getValue().contains("kafka")).extracting(Map.Entry::getKey)
                .as("packages that use kafka").containsExactly("app");
    }

    @Test
    void theLeafPackagesUseNoOtherPackage() {
        for (String leaf : Set.of("codec", "topic", "util", "config")) {
            assertThat(uses.get(leaf)).as("packages %s uses", leaf).isEmpty();
        }
    }

    @Test
    void noPackageDependsOnItselfThroughOthers() {
        assertThat(cycle()).as("a dependency cycle").isEmpty();
    }

    /** A cycle of packages, first package repeated at the end, or empty when there is none. */
    private static List<String> cycle() {
        Set<String> done = new HashSet<>();
        for (String start : uses.keySet()) {
            List<String> found = cycleFrom(start, new ArrayList<>(), done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    private static List<String> cycleFrom(String pkg, List<String> path, Set<String> done) {
        int at = path.indexOf(pkg);
        if (at >= 0) {
            List<String> cycle = new ArrayList<>(path.subList(at, path.size()));
            cycle.add(pkg);
            return cycle;
        }
        if (done.contains(pkg)) {
            return List.of();
        }
        path.add(pkg);
        for (String next : uses.getOrDefault(pkg, Set.of())) {
            List<String> found = cycleFrom(next, path, done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        path.remove(path.size() - 1);
        done.add(pkg);
        return List.of();
    }
}
