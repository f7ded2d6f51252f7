package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.Certificates;

/**
 * TLS listener and X.509 client certificates with the real openssl PKI and mosquitto clients: a
 * certificate from the trusted CA authenticates (its common name selects the ACL); the same
 * common name from an untrusted CA fails the handshake; old TLS versions are refused.
 */
class SecurityIT {
    private final ItStack it = ItStack.get();
    private final BrokerNode broker = it.broker();
    private final Certificates certs = it.certs();

    private List<String> tls(String tool, String... args) {
        List<String> c = new ArrayList<>(List.of(tool, "-h", "localhost", "-p", Integer.toString(broker.tlsPort()),
                "--cafile", certs.caCert().toString()));
        c.addAll(List.of(args));
        return c;
    }

    private static Result run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        boolean done = p.waitFor(20, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        return new Result(done ? p.exitValue() : -1, new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    record Result(int code, String output) {
    }

    @Test
    void trustedClientCertificateAuthenticatesWithoutPassword() throws Exception {
        Process sub = new ProcessBuilder(tls("mosquitto_sub", "--cert", certs.cert("client-good").toString(), "--key",
                certs.key("client-good").toString(), "-t", "sensors/#", "-C", "1", "-W", "15", "-v")).redirectErrorStream(true).start();
        Thread.sleep(1_000);
        Result pub = run(tls("mosquitto_pub", "--cert", certs.cert("client-good").toString(), "--key",
                certs.key("client-good").toString(), "-t", "sensors/sensor-1/temp", "-m", "21.5", "-q", "1"));
        assertThat(pub.code()).as(pub.output()).isZero();
        assertThat(sub.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(sub.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim())
                .isEqualTo("sensors/sensor-1/temp 21.5");
    }

    @Test
    void certificateAclStillAppliesToTheCertificateClient() throws Exception {
        Result denied = run(tls("mosquitto_sub", "-V", "mqttv5", "--cert", certs.cert("client-good").toString(), "--key",
                certs.key("client-good").toString(), "-t", "other/#", "-C", "1", "-W", "3"));
        assertThat(denied.output()).contains("All subscription requests were denied");
    }

    @Test
    void sameCommonNameFromAnUntrustedCaIsRefused() throws Exception {
        Result rogue = run(tls("mosquitto_pub", "--cert", certs.cert("client-rogue").toString(), "--key",
                certs.key("client-rogue").toString(), "-t", "sensors/sensor-1/temp", "-m", "spoofed"));
        assertThat(rogue.code()).isNotZero();
        assertThat(rogue.output()).doesNotContain("Connection Accepted");
    }

    @Test
    void anExpiredCertificateFromTheTrustedCaIsRefused() throws Exception {
        certs.client("client-expired", "sensor-1", "ca", -1);
        Result expired = run(tls("mosquitto_pub", "--cert", certs.cert("client-expired").toString(), "--key",
                certs.key("client-expired").toString(), "-t", "sensors/sensor-1/temp", "-m", "stale"));
        assertThat(expired.code()).as(expired.output()).isNotZero();
        assertThat(expired.output()).doesNotContain("Connection Accepted");
    }

    @Test
    void aClientCheckingTheHostNameRefusesAServerCertificateForAnotherName() throws Exception {
        String target = "localhost:" + broker.tlsPort();
        Result right = run(List.of("openssl", "s_client", "-CAfile", certs.caCert().toString(), "-verify_hostname", "localhost",
                "-verify_return_error", "-connect", target));
        assertThat(right.output()).contains("Verify return code: 0 (ok)");
        Result wrong = run(List.of("openssl", "s_client", "-CAfile", certs.caCert().toString(), "-verify_hostname",
                "broker.example.com", "-verify_return_error", "-connect", target));
        assertThat(wrong.output()).contains("hostname mismatch").doesNotContain("Verify return code: 0 (ok)");
    }

    @Test
    void tls10And11AreRefusedAndTls12Accepted() throws Exception {
        String target = "localhost:" + broker.tlsPort();
        double tlsFailedBefore = metric("tbmq_connections_tls_failed_total");
        double errorsBefore = metric("tbmq_connections_errors_total");
        for (String old : new String[] {"-tls1", "-tls1_1"}) {
            // Security level 0 lets this openssl offer the old protocol at all: the refusal must be the broker's.
            Result refused = run(List.of("openssl", "s_client", old, "-cipher", "DEFAULT@SECLEVEL=0", "-connect", target));
            assertThat(refused.output()).as(old).contains("alert protocol version");
        }
        Result current = run(List.of("openssl", "s_client", "-tls1_2", "-CAfile", certs.caCert().toString(), "-connect", target));
        assertThat(current.output()).contains("Protocol  : TLSv1.2").contains("Verify return code: 0 (ok)");
        // Counted as the clients' TLS failures, not as broker bugs (which TbmqConnectionErrors alerts on).
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
                .until(() -> metric("tbmq_connections_tls_failed_total") >= tlsFailedBefore + 2);
        assertThat(metric("tbmq_connections_errors_total")).isEqualTo(errorsBefore);
    }

    /** A series summed over its label sets, 0 when absent. */
    private double metric(String name) {
        return broker.get("/q/metrics").lines().filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void plainPasswordClientWorksOverTls() throws Exception {
        Result ok = run(tls("mosquitto_pub", "-u", "alice", "-P", ItStack.PASSWORD, "-t", "tls/plain", "-m", "y", "-q", "1"));
        assertThat(ok.code()).as(ok.output()).isZero();
    }
}
