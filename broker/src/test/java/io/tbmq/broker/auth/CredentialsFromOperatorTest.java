package io.tbmq.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The users file as the operator writes it from TbmqUser resources (the same file the operator's
 * UsersModelTest produces): the broker takes it beside a credentials file, and its users log in.
 */
class CredentialsFromOperatorTest {

    @Test
    void theOperatorsUsersFileLoadsAndItsPasswordUserLogsIn() throws Exception {
        String file;
        try (var in = getClass().getResourceAsStream("users-file-from-operator.json")) {
            file = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        CredentialStore store = CredentialStore.parse(List.of(new CredentialStore.Source("credentials.yaml", "users: []\n"),
                new CredentialStore.Source("users.yaml", file)));
        assertThat(store.user("meter-1")).get().satisfies(u -> {
            assertThat(u.clientType()).isEqualTo(ClientType.DEVICE);
            assertThat(u.denySubscribe()).containsExactly("commands/%c/debug");
        });
        assertThat(store.certificate("gateway.plant-7")).get().extracting(CredentialsFile.Certificate::clientType)
                .isEqualTo(ClientType.APPLICATION);

        Authenticator auth = new Authenticator(store, false, 10, Runnable::run);
        var ok = auth.authenticate("meter-1-client", "meter-1", "meter-secret".getBytes(StandardCharsets.UTF_8), null).join();
        assertThat(ok.result()).isEqualTo(Authenticator.Result.OK);
        assertThat(auth.authenticate("c", "meter-1", "wrong".getBytes(StandardCharsets.UTF_8), null).join().result())
                .isEqualTo(Authenticator.Result.BAD_CREDENTIALS);
    }
}
