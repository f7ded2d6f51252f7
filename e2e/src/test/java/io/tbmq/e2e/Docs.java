package io.tbmq.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Commands of the documentation, run as a user would type them. */
final class Docs {
    private Docs() {
    }

    /** The lines of the first ```sh block after {@code heading}. */
    static List<String> codeBlock(Path markdown, String heading) throws IOException {
        List<String> lines = Files.readAllLines(markdown);
        int at = lines.indexOf(heading);
        if (at < 0) {
            throw new IllegalStateException(markdown + " has no section " + heading);
        }
        List<String> block = new ArrayList<>();
        boolean in = false;
        for (String line : lines.subList(at + 1, lines.size())) {
            if (!in && line.equals("```sh")) {
                in = true;
            } else if (in && line.equals("```")) {
                return block;
            } else if (in) {
                block.add(line);
            }
        }
        throw new IllegalStateException("no ```sh block under " + heading + " in " + markdown);
    }

    /**
     * Runs {@code lines} as one bash script (stopping at the first failure) in {@code dir}, as root in
     * a login-like environment: without KUBECONFIG, and without what an enclosing make (make test)
     * exports to its children (REGISTRY, VERSION, ...), which a user's shell does not have; returns
     * the combined output.
     */
    static String run(Path dir, List<String> lines, Duration timeout) throws IOException, InterruptedException {
        Path script = Files.createTempFile("docs-", ".sh");
        Files.writeString(script, "set -euo pipefail\n" + String.join("\n", lines) + "\n");
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).directory(dir.toFile()).redirectErrorStream(true);
        for (String inherited : List.of("KUBECONFIG", "REGISTRY", "VERSION", "REDIS_IMAGE", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")) {
            pb.environment().remove(inherited);
        }
        pb.environment().put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:" + System.getenv("PATH"));
        Process p = pb.start();
        StringBuilder out = new StringBuilder();
        Thread reader = new Thread(() -> {
            try (var in = p.getInputStream()) {
                byte[] buf = new byte[8192];
                int n;
                while ((n = in.read(buf)) > 0) {
                    String s = new String(buf, 0, n);
                    System.out.print(s);
                    synchronized (out) {
                        out.append(s);
                    }
                }
            } catch (IOException e) {
                // process gone
            }
        });
        reader.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("timed out after " + timeout + ": " + lines);
        }
        reader.join(5_000);
        Files.deleteIfExists(script);
        if (p.exitValue() != 0) {
            throw new IllegalStateException("exit " + p.exitValue() + " from " + lines + ":\n" + out);
        }
        synchronized (out) {
            return out.toString();
        }
    }
}
