package io.tbmq.broker.auth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

/**
 * Watches the credentials file (a mounted Secret: the kubelet swaps its content in place) and
 * hands a changed, valid file to the authenticator, then asks for connected clients to be checked
 * again. An invalid file is reported once and the credentials in force stay: a typo in a Secret
 * edit must not lock every client out.
 */
public final class CredentialsReloader implements Runnable {
    private static final Logger LOG = Logger.getLogger(CredentialsReloader.class);

    private final Path file;
    private final Authenticator authenticator;
    private final Runnable recheckConnections;
    private final Consumer<Boolean> outcome;
    private byte[] lastDigest;

    /**
     * @param loaded the content the broker started with (not reloaded until it changes)
     * @param outcome told true after a reload, false after a refused one (for the metrics)
     */
    public CredentialsReloader(Path file, byte[] loaded, Authenticator authenticator, Runnable recheckConnections,
            Consumer<Boolean> outcome) {
        this.file = file;
        this.authenticator = authenticator;
        this.recheckConnections = recheckConnections;
        this.outcome = outcome;
        this.lastDigest = sha256(loaded);
    }

    @Override
    public synchronized void run() {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            // Mid-swap or briefly absent: the next check sees the new file.
            LOG.debugf("credentials file %s not readable now: %s", file, e.toString());
            return;
        }
        byte[] digest = sha256(content);
        if (Arrays.equals(digest, lastDigest)) {
            return;
        }
        lastDigest = digest;
        CredentialStore next;
        try {
            next = CredentialStore.parse(new String(content, java.nio.charset.StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            LOG.errorf("credentials file %s changed but is invalid; the previous credentials stay in force: %s", file, e.getMessage());
            outcome.accept(false);
            return;
        }
        authenticator.replace(next);
        LOG.infof("credentials reloaded from %s: %d users, %d certificate entries; re-checking connected clients", file,
                next.userCount(), next.certificateCount());
        outcome.accept(true);
        recheckConnections.run();
    }

    static byte[] sha256(byte[] content) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(content);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
