package io.tbmq.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void aUsersFileAddsToTheCredentialsFileAndAConflictBetweenThemIsRefused() throws Exception {
        Path credentials = Files.writeString(dir.resolve("credentials.yaml"), ONE);
        Path users = Files.writeString(dir.resolve("users.yaml"), "users: []\n");
        List<Path> files = List.of(credentials, users);
        List<byte[]> loaded = List.of(Files.readAllBytes(credentials), Files.readAllBytes(users));
        Authenticator auth = new Authenticator(CredentialStore.parse(List.of(new CredentialStore.Source("credentials.yaml", ONE),
                new CredentialStore.Source("users.yaml", "users: []\n"))), false, 10, Runnable::run);
        CredentialsReloader reloader = new CredentialsReloader(files, loaded, auth, rechecks::incrementAndGet, outcomes::add);

        Files.writeString(users, "users:\n  - username: b\n    password: \"" + HASH + "\"\n");
        reloader.run();
        assertThat(logsIn(auth, "a")).isTrue();
        assertThat(logsIn(auth, "b")).as("a user of the users file").isTrue();
        assertThat(rechecks).hasValue(1);

        // The same name in both files: refused, nothing changes.
        Files.writeString(users, "users:\n  - username: a\n    password: \"" + HASH + "\"\n");
        reloader.run();
        assertThat(outcomes).containsExactly(true, false);
        assertThat(logsIn(auth, "b")).as("the credentials in force stay").isTrue();
        assertThatThrownBy(() -> CredentialStore.parse(List.of(new CredentialStore.Source("credentials.yaml", ONE),
                new CredentialStore.Source("users.yaml", ONE)))).hasMessageContaining("user 'a' is in both credentials.yaml and users.yaml");
        assertThatThrownBy(() -> CredentialStore.parse(List.of(new CredentialStore.Source("credentials.yaml", ONE),
                new CredentialStore.Source("users.yaml", "anonymous:\n  publish: [\"#\"]\n")))).hasMessageContaining("anonymous");
    }
}
