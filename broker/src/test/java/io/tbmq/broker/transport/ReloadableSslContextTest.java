package io.tbmq.broker.transport;

import static io.tbmq.broker.transport.PemKeysTest.handshake;
import static io.tbmq.broker.transport.PemKeysTest.listener;
import static io.tbmq.broker.transport.PemKeysTest.openssl;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A certificate renewed on disk (cert-manager rewriting its Secret) is served to new handshakes without a restart. */
class ReloadableSslContextTest {

    private static void selfSigned(Path dir, String name, String cn) throws Exception {
        openssl(dir, "genrsa", "-traditional", "-out", name + ".key", "2048");
        openssl(dir, "req", "-x509", "-key", name + ".key", "-subj", "/CN=" + cn, "-days", "1", "-out", name + ".crt");
    }

    private static void install(Path dir, String certFrom, String keyFrom) throws Exception {
        Files.copy(dir.resolve(certFrom + ".crt"), dir.resolve("tls.crt"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(dir.resolve(keyFrom + ".key"), dir.resolve("tls.key"), StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void aRenewedCertificateIsServedAndABrokenPairIsRefused(@TempDir Path dir) throws Exception {
        selfSigned(dir, "old", "broker-old");
        selfSigned(dir, "new", "broker-new");
        install(dir, "old", "old");
        ReloadableSslContext ssl = new ReloadableSslContext("tls", listener(dir.resolve("tls.crt"), dir.resolve("tls.key")));
        List<Boolean> outcomes = new ArrayList<>();
        ssl.reloadIfChanged(outcomes::add);
        assertThat(outcomes).as("nothing changed yet").isEmpty();
        assertThat(handshake(ssl.get()).getSubjectX500Principal().getName()).isEqualTo("CN=broker-old");

        install(dir, "new", "new");
        ssl.reloadIfChanged(outcomes::add);
        assertThat(handshake(ssl.get()).getSubjectX500Principal().getName()).isEqualTo("CN=broker-new");

        // Half an edit: the certificate written, the key not yet.
        install(dir, "old", "new");
        ssl.reloadIfChanged(outcomes::add);
        assertThat(handshake(ssl.get()).getSubjectX500Principal().getName()).as("the last good pair stays in force")
                .isEqualTo("CN=broker-new");
        assertThat(outcomes).containsExactly(true, false);
    }
}
