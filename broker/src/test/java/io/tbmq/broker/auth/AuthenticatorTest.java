package io.tbmq.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.topic.Topics;

/** Credentials replaced while clients are connected: who stays, with what permissions, and who must go. */
class AuthenticatorTest {
    private static final String OLD = PasswordHasher.hash("old".toCharArray(), 1000);
    private static final String NEW = PasswordHasher.hash("new".toCharArray(), 1000);

    private static CredentialStore store(String yaml) {
        return CredentialStore.parse(yaml.formatted(OLD, OLD, NEW));
    }

    private static final String BEFORE = """
            users:
              - username: kept
                password: "%s"
                publish: ["#"]
                subscribe: ["#"]
              - username: rotated
                password: "%s"
            certificates:
              - commonName: sensor-1
                publish: ["sensors/#"]
            """;

    private static ClientIdentity login(Authenticator auth, String user, String password) {
        Authenticator.Outcome outcome = auth.authenticate("c-" + user, user, password.getBytes(StandardCharsets.UTF_8), null).join();
        assertThat(outcome.result()).as("%s logs in", user).isEqualTo(Authenticator.Result.OK);
        return outcome.identity();
    }

    @Test
    void anUnchangedEntryKeepsItsClientWithThePermissionsAsTheyAreNow() {
        Authenticator auth = new Authenticator(store(BEFORE), false, 100, Runnable::run);
        ClientIdentity kept = login(auth, "kept", "old");
        auth.replace(store("""
                users:
                  - username: kept
                    password: "%s"
                    publish: ["plant/#"]
                    subscribe: ["plant/#"]
                """));
        Recheck recheck = auth.recheck(kept, "c-kept");
        assertThat(recheck).isInstanceOf(Recheck.Keep.class);
        Acl narrowed = ((Recheck.Keep) recheck).identity().acl();
        assertThat(narrowed.canPublish("plant/1")).isTrue();
        assertThat(narrowed.canPublish("other/1")).as("narrowed from # to plant/#").isFalse();
        assertThat(narrowed.canSubscribe(Topics.parseFilter("other/#", 100))).isFalse();
    }

    @Test
    void aRemovedUserAChangedPasswordAndARemovedCertificateRevokeTheirClients() throws Exception {
        Authenticator auth = new Authenticator(store(BEFORE), false, 100, Runnable::run);
        ClientIdentity kept = login(auth, "kept", "old");
        ClientIdentity rotated = login(auth, "rotated", "old");
        ClientIdentity sensor = new ClientIdentity("sensor-1", ClientType.DEVICE, Acl.ALLOW_ALL, ClientIdentity.Source.CERTIFICATE, null);
        auth.replace(store("""
                users:
                  - username: other
                    password: "%s"
                  - username: placeholder
                    password: "%s"
                  - username: rotated
                    password: "%s"
                """));
        assertThat(auth.recheck(kept, "c-kept")).isEqualTo(new Recheck.Revoke("user 'kept' removed"));
        assertThat(auth.recheck(rotated, "c-rotated")).isEqualTo(new Recheck.Revoke("password of 'rotated' changed"));
        assertThat(auth.recheck(sensor, "c-sensor")).isEqualTo(new Recheck.Revoke("certificate 'sensor-1' no longer allowed"));
    }

    @Test
    void aChangedPasswordIsNotAcceptedFromTheRememberedCheckOfTheOldOne() {
        Authenticator auth = new Authenticator(store(BEFORE), false, 100, Runnable::run);
        login(auth, "rotated", "old");
        auth.replace(store("""
                users:
                  - username: a
                    password: "%s"
                  - username: b
                    password: "%s"
                  - username: rotated
                    password: "%s"
                """));
        assertThat(auth.authenticate("c", "rotated", "old".getBytes(StandardCharsets.UTF_8), null).join().result())
                .isEqualTo(Authenticator.Result.BAD_CREDENTIALS);
        assertThat(login(auth, "rotated", "new").principal()).isEqualTo("rotated");
    }

    @Test
    void aChangedClientTypeRevokesSoTheClientReconnectsWithTheRightKindOfSession() {
        Authenticator auth = new Authenticator(store(BEFORE), false, 100, Runnable::run);
        ClientIdentity kept = login(auth, "kept", "old");
        auth.replace(store("""
                users:
                  - username: kept
                    password: "%s"
                    clientType: APPLICATION
                  - username: x
                    password: "%s"
                  - username: y
                    password: "%s"
                """));
        assertThat(auth.recheck(kept, "c-kept")).isEqualTo(new Recheck.Revoke("client type changed to APPLICATION"));
    }
}
