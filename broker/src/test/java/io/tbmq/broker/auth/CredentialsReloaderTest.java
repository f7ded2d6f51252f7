package io.tbmq.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CredentialsReloaderTest {
    private static final String HASH = PasswordHasher.hash("pw".toCharArray(), 1000);
    private static final String ONE = "users:\n  - username: a\n    password: \"" + HASH + "\"\n";
    private static final String TWO = ONE + "  - username: b\n    password: \"" + HASH + "\"\n";

    @TempDir
    Path dir;

    private final List<Boolean> outcomes = new ArrayList<>();
    private final AtomicInteger rechecks = new AtomicInteger();

    private boolean logsIn(Authenticator auth, String user) {
        return auth.authenticate("c", user, "pw".getBytes(StandardCharsets.UTF_8), null).join().result() == Authenticator.Result.OK;
    }

    @Test
    void aChangedFileAppliesAndConnectedClientsAreRecheckedOnce() throws Exception {
        Path file = Files.writeString(dir.resolve("credentials.yaml"), ONE);
        Authenticator auth = new Authenticator(CredentialStore.parse(ONE), false, 10, Runnable::run);
        CredentialsReloader reloader = new CredentialsReloader(file, Files.readAllBytes(file), auth, rechecks::incrementAndGet,
                outcomes::add);
        reloader.run();
        assertThat(rechecks).as("the file the broker started with is not a change").hasValue(0);
        Files.writeString(file, TWO);
        reloader.run();
        reloader.run();
        assertThat(logsIn(auth, "b")).as("a user added to the file").isTrue();
        assertThat(rechecks).hasValue(1);
        assertThat(outcomes).containsExactly(true);
    }

    @Test
    void anInvalidFileIsRefusedOnceAndTheCredentialsInForceStay() throws Exception {
        Path file = Files.writeString(dir.resolve("credentials.yaml"), TWO);
        Authenticator auth = new Authenticator(CredentialStore.parse(TWO), false, 10, Runnable::run);
        CredentialsReloader reloader = new CredentialsReloader(file, Files.readAllBytes(file), auth, rechecks::incrementAndGet,
                outcomes::add);
        Files.writeString(file, "users:\n  - username: a\n    password: plain-text\n");
        reloader.run();
        reloader.run();
        Files.delete(file);
        reloader.run();
        assertThat(logsIn(auth, "a")).isTrue();
        assertThat(logsIn(auth, "b")).as("not locked out by a bad edit").isTrue();
        assertThat(rechecks).hasValue(0);
        assertThat(outcomes).containsExactly(false);
    }
}
