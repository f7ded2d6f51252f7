package io.tbmq.broker.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Optional;

import org.jboss.logging.Logger;

import io.netty.handler.ssl.SslContext;
import io.tbmq.broker.config.ListenersConfig;

/**
 * A TLS listener's context, rebuilt when its PEM files change (cert-manager renews a certificate
 * by rewriting its Secret, and the kubelet swaps the mounted files). New connections get the new
 * certificate; open ones keep the session they negotiated. Files that cannot be used (a key from
 * another certificate, half an edit) leave the current certificate in force.
 */
final class ReloadableSslContext {
    private static final Logger LOG = Logger.getLogger(ReloadableSslContext.class);

    private final String name;
    private final ListenersConfig.Listener cfg;
    private volatile SslContext current;
    private byte[] digest;

    ReloadableSslContext(String name, ListenersConfig.Listener cfg) {
        this.name = name;
        this.cfg = cfg;
        this.digest = digestOrNull();
        this.current = SslContexts.server(name, cfg);
    }

    SslContext get() {
        return current;
    }

    /** Rebuilds the context if the files changed; {@code outcome} hears whether the change was applied. */
    synchronized void reloadIfChanged(java.util.function.Consumer<Boolean> outcome) {
        byte[] now = digestOrNull();
        if (now == null || Arrays.equals(now, digest)) {
            return;
        }
        digest = now;
        try {
            current = SslContexts.server(name, cfg);
            LOG.infof("TLS files of the %s listener reloaded (%s); new connections use them", name, cfg.cert().orElse(""));
            outcome.accept(true);
        } catch (IllegalArgumentException e) {
            LOG.errorf("TLS files of the %s listener changed but cannot be used; the previous certificate stays in force: %s", name,
                    e.getMessage());
            outcome.accept(false);
        }
    }

    private byte[] digestOrNull() {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (Optional<String> file : java.util.List.of(cfg.cert(), cfg.key(), cfg.trustCerts())) {
                if (file.isPresent()) {
                    md.update(Files.readAllBytes(Path.of(file.get())));
                    md.update((byte) 0);
                }
            }
            return md.digest();
        } catch (IOException e) {
            // Mid-swap: the next check reads the complete set.
            return null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
