package io.tbmq.broker.app;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Why the broker stopped with an error, written where Kubernetes reads a container's termination
 * message. The kubelet shows it as the container's last state ({@code kubectl describe pod}) and the
 * operator puts it into the TbmqCluster's status, so a crash-looping broker says why without
 * anybody reading its logs. Nothing is written outside Kubernetes, where the file does not exist.
 * <p>
 * The path is read from the system property or environment variable directly, not through the
 * broker's configuration: the message must also go out when that configuration is what is wrong.
 */
public final class TerminationMessage {
    public static final String PROPERTY = "tbmq.termination-message-path";
    static final String ENV = "TBMQ_TERMINATION_MESSAGE_PATH";
    /** Where the kubelet looks unless a pod names another terminationMessagePath. */
    public static final String DEFAULT_PATH = "/dev/termination-log";
    /** The kubelet keeps at most 4096 bytes of a container's message. */
    static final int MAX_BYTES = 4096;

    /** What Quarkus says around a failed start, which the cause says better. */
    private static final List<String> GENERIC = List.of("Failed to start quarkus");

    private static volatile String reason;

    private TerminationMessage() {
    }

    /** Remembers why the broker is about to exit (the first reason given wins: later ones follow from it). */
    public static synchronized void record(String why) {
        if (reason == null && why != null && !why.isBlank()) {
            reason = why;
        }
    }

    /** For tests: the process-wide reason back to none. */
    static synchronized void forget() {
        reason = null;
    }

    /** What the recorded reason or, failing that, the failure says; empty when neither says anything. */
    static Optional<String> text(Throwable failure) {
        if (reason != null) {
            return Optional.of(reason);
        }
        return failure == null ? Optional.empty() : Optional.of(describe(failure));
    }

    /**
     * The messages of the failure and its causes, outermost first, each once: a wrapper often
     * repeats its cause's message, and Quarkus wraps a start failure in words of its own.
     */
    public static String describe(Throwable failure) {
        List<String> parts = new ArrayList<>();
        Throwable last = failure;
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 10; t = t.getCause() == t ? null : t.getCause(), depth++) {
            last = t;
            String message = t.getMessage() == null ? "" : t.getMessage().strip();
            Throwable cause = t.getCause() == t ? null : t.getCause();
            if (cause != null && message.equals(cause.toString())) {
                continue; // new RuntimeException(cause): its cause says it
            }
            if (!message.isEmpty() && !GENERIC.contains(message) && parts.stream().noneMatch(p -> p.contains(message))) {
                parts.add(message);
            }
        }
        return parts.isEmpty() ? last.getClass().getName() : String.join(": ", parts);
    }

    /** Writes the message for an exit with {@code code}; only an error exit has one. */
    static void onExit(int code, Throwable failure) {
        if (code == 0) {
            return;
        }
        text(failure).ifPresent(message -> write(path(), message));
    }

    static Path path() {
        String configured = System.getProperty(PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(ENV);
        }
        return Path.of(configured == null || configured.isBlank() ? DEFAULT_PATH : configured);
    }

    /** Replaces the file's content; does nothing when the file is not there (not in a container). */
    static void write(Path file, String message) {
        if (!Files.isRegularFile(file)) {
            return;
        }
        try {
            Files.write(file, truncated(message), StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException | RuntimeException e) {
            System.err.println("could not write the termination message to " + file + ": " + e);
        }
    }

    /** At most {@link #MAX_BYTES} bytes of UTF-8, never cut inside a character. */
    static byte[] truncated(String message) {
        CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        ByteBuffer out = ByteBuffer.allocate(MAX_BYTES);
        encoder.encode(CharBuffer.wrap(message), out, true);
        byte[] bytes = new byte[out.position()];
        out.flip().get(bytes);
        return bytes;
    }
}
