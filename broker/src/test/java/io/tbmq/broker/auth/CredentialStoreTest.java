package io.tbmq.broker.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CredentialStoreTest {
    private static final String HASH = PasswordHasher.hash("pw".toCharArray(), 1000);

    @Test
    void loadsUsersCertificatesAndAnonymousPermissions() {
        CredentialStore store = CredentialStore.parse("""
                users:
                  - username: a
                    password: "%s"
                    clientType: APPLICATION
                    publish: ["x/#"]
                certificates:
                  - commonName: "*"
                    subscribe: ["y/#"]
                anonymous:
                  publish: ["public/#"]
                """.formatted(HASH));
        assertThat(store.user("a")).get().extracting(CredentialsFile.User::clientType).isEqualTo(ClientType.APPLICATION);
        assertThat(store.certificate("any-cn")).isPresent();
        assertThat(store.anonymous()).isPresent();
    }

    @Test
    void badEntriesFailLoadingWithAMessageNamingThem() {
        assertThatThrownBy(() -> CredentialStore.parse("users:\n  - username: a\n    password: plain\n"))
                .hasMessageContaining("user 'a'").hasMessageContaining("make passwd");
        assertThatThrownBy(() -> CredentialStore.parse("users:\n  - username: a\n    password: \"%s\"\n    publish: [\"a/#/b\"]\n"
                .formatted(HASH))).hasMessageContaining("user 'a'").hasMessageContaining("a/#/b");
        assertThatThrownBy(() -> CredentialStore.parse("users:\n  - username: a\n    password: \"%s\"\n  - username: a\n    password: \"%s\"\n"
                .formatted(HASH, HASH))).hasMessageContaining("twice");
        assertThatThrownBy(() -> CredentialStore.parse("userz: []\n")).hasMessageContaining("cannot parse");
    }

    @Test
    void passwordHashesVerifyOnlyTheirPassword() {
        String hash = PasswordHasher.hash("correct horse".toCharArray(), 2000);
        assertThat(hash).startsWith("pbkdf2-sha256$2000$");
        assertThat(PasswordHasher.verify("correct horse".toCharArray(), hash)).isTrue();
        assertThat(PasswordHasher.verify("correct horsE".toCharArray(), hash)).isFalse();
        assertThat(PasswordHasher.verify("x".toCharArray(), "pbkdf2-sha256$bad")).isFalse();
        assertThat(PasswordHasher.hash("same".toCharArray(), 1000)).isNotEqualTo(PasswordHasher.hash("same".toCharArray(), 1000));
    }
}
