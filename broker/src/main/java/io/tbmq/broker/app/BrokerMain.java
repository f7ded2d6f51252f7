package io.tbmq.broker.app;

import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import io.quarkus.runtime.ApplicationLifecycleManager;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;
import io.tbmq.broker.auth.PasswordHasher;

/**
 * Entry point. {@code hash-password [iterations]} prints a credentials-file hash of a password
 * read from the terminal or stdin (never from the command line, which other users can see) and
 * exits without starting the broker; anything else starts the broker.
 */
@QuarkusMain
public final class BrokerMain {
    private BrokerMain() {
    }

    public static void main(String... args) throws IOException {
        if (args.length > 0 && args[0].equals("hash-password")) {
            int iterations = args.length > 1 ? Integer.parseInt(args[1]) : PasswordHasher.DEFAULT_ITERATIONS;
            char[] password = readPassword();
            if (password == null || password.length == 0) {
                System.err.println("no password given");
                System.exit(2);
            }
            System.out.println(PasswordHasher.hash(password, iterations));
            System.exit(0);
        }
        // Redis and Kafka pods come back with new addresses under the same names: look names up again
        // after seconds, not the JVM's default 30 s (which held delivery up that long after a Redis pod restart).
        if (java.security.Security.getProperty("networkaddress.cache.ttl") == null) {
            java.security.Security.setProperty("networkaddress.cache.ttl", "5");
        }
        java.security.Security.setProperty("networkaddress.cache.negative.ttl", "1");
        // Quarkus logs a failed start as before and then calls this instead of System.exit alone. After a
        // SIGTERM (the VM already shutting down) an error is a consequence of the stop, not its reason.
        ApplicationLifecycleManager.setDefaultExitCodeHandler((code, failure) -> {
            if (!ApplicationLifecycleManager.isVmShuttingDown()) {
                TerminationMessage.onExit(code, failure);
            }
            System.exit(code);
        });
        try {
            Quarkus.run(args);
        } catch (RuntimeException | Error e) {
            // Thrown before Quarkus' own handling begins (the generated application's initialisation).
            TerminationMessage.onExit(1, e);
            throw e;
        }
    }

    /** JDK 22+ returns a Console even for redirected input; isTerminal (22+) tells them apart. */
    private static boolean isTerminal(Console console) {
        try {
            return (boolean) Console.class.getMethod("isTerminal").invoke(console);
        } catch (ReflectiveOperationException e) {
            return true;
        }
    }

    private static char[] readPassword() throws IOException {
        Console console = System.console();
        if (console != null && isTerminal(console)) {
            return console.readPassword("Password: ");
        }
        String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        return line == null ? null : line.toCharArray();
    }
}
