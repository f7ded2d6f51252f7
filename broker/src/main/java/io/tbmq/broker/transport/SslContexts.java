package io.tbmq.broker.transport;

import java.io.File;

import java.nio.file.Path;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.tbmq.broker.config.ListenersConfig;

/**
 * TLS for the tls and wss listeners from PEM files (keys in PKCS#8, PKCS#1 or SEC1, RSA or EC:
 * {@link PemFiles}). With trust-certs set, client certificates
 * are verified against exactly those CAs: one from another CA fails the handshake whatever its
 * common name says.
 */
final class SslContexts {
    private SslContexts() {
    }

    static SslContext server(String name, ListenersConfig.Listener cfg) {
        String cert = cfg.cert().orElseThrow(() -> new IllegalArgumentException(
                "tbmq.listeners." + name + ".cert is required when the " + name + " listener is enabled"));
        String key = cfg.key().orElseThrow(() -> new IllegalArgumentException(
                "tbmq.listeners." + name + ".key is required when the " + name + " listener is enabled"));
        try {
            java.security.PrivateKey privateKey = PemFiles.privateKey(Path.of(key));
            java.security.cert.X509Certificate[] chain = PemFiles.certificates(Path.of(cert));
            checkPair(privateKey, chain[0]);
            SslContextBuilder builder = SslContextBuilder.forServer(privateKey, chain)
                    .protocols(cfg.protocols().toArray(String[]::new));
            if (cfg.trustCerts().isPresent() && cfg.clientAuth() != ListenersConfig.ClientAuth.NONE) {
                builder.trustManager(new File(cfg.trustCerts().get()))
                        .clientAuth(cfg.clientAuth() == ListenersConfig.ClientAuth.REQUIRE ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
            }
            return builder.build();
        } catch (java.io.IOException | java.security.GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("TLS setup of the " + name + " listener failed: " + e.getMessage(), e);
        }
    }

    /**
     * The JDK's key manager does not notice a key that belongs to another certificate, and every
     * handshake would fail later; a file edited one at a time passes through that state.
     */
    static void checkPair(java.security.PrivateKey key, java.security.cert.X509Certificate cert)
            throws java.security.GeneralSecurityException {
        String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm();
        byte[] probe = "tbmq key pair check".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        java.security.Signature sign = java.security.Signature.getInstance(algorithm);
        sign.initSign(key);
        sign.update(probe);
        byte[] signature = sign.sign();
        java.security.Signature verify = java.security.Signature.getInstance(algorithm);
        verify.initVerify(cert.getPublicKey());
        verify.update(probe);
        if (!verify.verify(signature)) {
            throw new IllegalArgumentException("the key does not belong to the certificate " + cert.getSubjectX500Principal().getName());
        }
    }
}
