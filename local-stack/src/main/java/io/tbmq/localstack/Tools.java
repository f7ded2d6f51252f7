package io.tbmq.localstack;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Finds the external programs the stack runs, with an actionable error when one is missing. */
public final class Tools {
    private Tools() {
    }

    public static Path require(String program, String debianPackage) {
        return find(program).orElseThrow(() -> new IllegalStateException(
                program + " is not installed. Install it with `apt-get install -y " + debianPackage
                        + "` (make run and make test do this for you)."));
    }

    public static Optional<Path> find(String program) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : (path + ":/usr/sbin:/usr/bin").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The java binary of this JVM, so children run on the same runtime (Temurin 25 here). */
    public static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }
}
