package io.tbmq.broker.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.tbmq.broker.config.ListenersConfig;

/**
 * Server keys as tools write them (cert-manager's PKCS#1 by default, openssl's SEC1 for EC, PKCS#8)
 * all serve TLS: each one completes a real handshake with a client that then sees the certificate.
 */
class PemKeysTest {

    @ParameterizedTest
    @ValueSource(strings = {"rsa-pkcs1", "rsa-pkcs8", "ec-sec1", "ec-pkcs8"})
    void everyKeyEncodingServesAHandshake(String kind, @TempDir Path dir) throws Exception {
        Path key = dir.resolve("tls.key");
        Path cert = dir.resolve("tls.crt");
        switch (kind) {
            case "rsa-pkcs1" -> openssl(dir, "genrsa", "-traditional", "-out", key.toString(), "2048");
            case "rsa-pkcs8" -> openssl(dir, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key.toString());
            case "ec-sec1" -> openssl(dir, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key.toString());
            default -> openssl(dir, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key.toString());
        }
        String header = java.nio.file.Files.readString(key).lines().findFirst().orElse("");
        assertThat(header).isEqualTo(switch (kind) {
            case "rsa-pkcs1" -> "-----BEGIN RSA PRIVATE KEY-----";
            case "ec-sec1" -> "-----BEGIN EC PRIVATE KEY-----";
            default -> "-----BEGIN PRIVATE KEY-----";
        });
        openssl(dir, "req", "-x509", "-key", key.toString(), "-subj", "/CN=broker.test", "-days", "1", "-out", cert.toString());

        SslContext server = SslContexts.server("tls", listener(cert, key));
        X509Certificate seen = handshake(server);
        assertThat(seen.getSubjectX500Principal().getName()).isEqualTo("CN=broker.test");
    }

    @Test
    void anEncryptedKeyIsAClearError(@TempDir Path dir) throws Exception {
        Path key = dir.resolve("tls.key");
        Path cert = dir.resolve("tls.crt");
        openssl(dir, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-aes256", "-pass", "pass:x", "-out",
                key.toString());
        openssl(dir, "req", "-x509", "-key", key.toString(), "-passin", "pass:x", "-subj", "/CN=b", "-days", "1", "-out",
                cert.toString());
        assertThatThrownBy(() -> SslContexts.server("tls", listener(cert, key))).hasMessageContaining("tls listener")
                .hasMessageContaining("encrypted key");
    }

    static X509Certificate handshake(SslContext serverContext) throws Exception {
        SSLEngine server = serverContext.newEngine(ByteBufAllocator.DEFAULT);
        SSLContext trustAll = SSLContext.getInstance("TLS");
        trustAll.init(null, new TrustManager[] {new X509TrustManager() {
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        SSLEngine client = trustAll.createSSLEngine("broker.test", 8883);
        client.setUseClientMode(true);
        int size = Math.max(server.getSession().getPacketBufferSize(), client.getSession().getPacketBufferSize());
        ByteBuffer c2s = ByteBuffer.allocate(size * 4);
        ByteBuffer s2c = ByteBuffer.allocate(size * 4);
        ByteBuffer app = ByteBuffer.allocate(size * 4);
        ByteBuffer empty = ByteBuffer.allocate(0);
        client.beginHandshake();
        server.beginHandshake();
        for (int i = 0; i < 200 && !(done(client) && done(server)); i++) {
            step(client, empty, c2s, s2c, app);
            step(server, empty, s2c, c2s, app);
        }
        assertThat(done(client)).as("handshake completed").isTrue();
        return (X509Certificate) client.getSession().getPeerCertificates()[0];
    }

    private static boolean done(SSLEngine e) {
        HandshakeStatus s = e.getHandshakeStatus();
        return s == HandshakeStatus.NOT_HANDSHAKING || s == HandshakeStatus.FINISHED;
    }

    /** One engine's turn: run delegated tasks, write what it has to send, read what the peer sent. */
    private static void step(SSLEngine e, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer app) throws Exception {
        Runnable task;
        while ((task = e.getDelegatedTask()) != null) {
            task.run();
        }
        e.wrap(empty, out);
        in.flip();
        if (in.hasRemaining()) {
            e.unwrap(in, app);
            while ((task = e.getDelegatedTask()) != null) {
                task.run();
            }
        }
        in.compact();
    }

    static void openssl(Path dir, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", cmd) + "\n" + out).isZero();
    }

    static ListenersConfig.Listener listener(Path cert, Path key) {
        return (ListenersConfig.Listener) java.lang.reflect.Proxy.newProxyInstance(ListenersConfig.Listener.class.getClassLoader(),
                new Class<?>[] {ListenersConfig.Listener.class}, (proxy, method, a) -> switch (method.getName()) {
                    case "cert" -> Optional.of(cert.toString());
                    case "key" -> Optional.of(key.toString());
                    case "trustCerts" -> Optional.empty();
                    case "protocols" -> List.of("TLSv1.3", "TLSv1.2");
                    case "clientAuth" -> ListenersConfig.ClientAuth.NONE;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
