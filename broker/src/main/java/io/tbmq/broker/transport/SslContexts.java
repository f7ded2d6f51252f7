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
            SslContextBuilder builder = SslContextBuilder.forServer(PemFiles.privateKey(Path.of(key)),
                    PemFiles.certificates(Path.of(cert))).protocols(cfg.protocols().toArray(String[]::new));
            if (cfg.trustCerts().isPresent() && cfg.clientAuth() != ListenersConfig.ClientAuth.NONE) {
                builder.trustManager(new File(cfg.trustCerts().get()))
                        .clientAuth(cfg.clientAuth() == ListenersConfig.ClientAuth.REQUIRE ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
            }
            return builder.build();
        } catch (java.io.IOException | java.security.GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("TLS setup of the " + name + " listener failed: " + e.getMessage(), e);
        }
    }
}
