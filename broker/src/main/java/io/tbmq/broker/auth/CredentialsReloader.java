package io.tbmq.broker.auth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

/**
 * Watches the credentials files (mounted Secrets: the kubelet swaps their content in place) and
 * hands a changed, valid set to the authenticator, then asks for connected clients to be checked
 * again. An invalid change is reported once and the credentials in force stay: a typo in a Secret
 * edit must not lock every client out.
 */
public final class CredentialsReloader implements Runnable {
    private static final Logger LOG = Logger.getLogger(CredentialsReloader.class);

    private final List<Path> files;
    private final Authenticator authenticator;
    private final Runnable recheckConnections;
    private final Consumer<Boolean> outcome;
    private byte[] lastDigest;

    /**
     * @param files the credentials file and/or the users file, in the order {@link CredentialStore#parse(List)} takes them
     * @param loaded the contents the broker started with, in the same order (not reloaded until they change)
     * @param outcome told true after a reload, false after a refused one (for the metrics)
     */
    public CredentialsReloader(List<Path> files, List<byte[]> loaded, Authenticator authenticator, Runnable recheckConnections,
            Consumer<Boolean> outcome) {
        this.files = List.copyOf(files);
        this.authenticator = authenticator;
        this.recheckConnections = recheckConnections;
        this.outcome = outcome;
        this.lastDigest = sha256(loaded);
    }

    public CredentialsReloader(Path file, byte[] loaded, Authenticator authenticator, Runnable recheckConnections,
            Consumer<Boolean> outcome) {
        this(List.of(file), List.of(loaded), authenticator, recheckConnections, outcome);
    }

    @Override
    public synchronized void run() {
        List<byte[]> contents = new ArrayList<>();
        for (Path file : files) {
            try {
                contents.add(Files.readAllBytes(file));
            } catch (IOException e) {
                // Mid-swap or briefly absent: the next check sees the new file.
                LOG.debugf("credentials file %s not readable now: %s", file, e.toString());
                return;
            }
        }
        byte[] digest = sha256(contents);
        if (Arrays.equals(digest, lastDigest)) {
            return;
        }
        lastDigest = digest;
        List<CredentialStore.Source> sources = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            sources.add(new CredentialStore.Source(files.get(i).toString(), new String(contents.get(i), StandardCharsets.UTF_8)));
        }
        CredentialStore next;
        try {
            next = CredentialStore.parse(sources);
        } catch (IllegalArgumentException e) {
            LOG.errorf("credentials in %s changed but are invalid; the previous credentials stay in force: %s", files, e.getMessage());
            outcome.accept(false);
            return;
        }
        authenticator.replace(next);
        LOG.infof("credentials reloaded from %s: %d users, %d certificate entries; re-checking connected clients", files,
                next.userCount(), next.certificateCount());
        outcome.accept(true);
        recheckConnections.run();
    }

    static byte[] sha256(List<byte[]> contents) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (byte[] content : contents) {
                // The length first, so moving bytes from one file to the next still changes the digest.
                digest.update(java.nio.ByteBuffer.allocate(8).putLong(content.length).array());
                digest.update(content);
            }
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
