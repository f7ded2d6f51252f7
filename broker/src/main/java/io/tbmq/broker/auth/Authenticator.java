package io.tbmq.broker.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Decides who a connecting client is, in this order: a client certificate that the TLS listener
 * already verified against its trusted CAs (an untrusted one never gets here), then user name and
 * password, then anonymous access if enabled. Password checks run on their own threads.
 */
public final class Authenticator {
    /** Never matches a real hash; checked against unknown users so they cost as much as known ones. */
    private static final String DUMMY_HASH = PasswordHasher.hash("dummy".toCharArray(), PasswordHasher.DEFAULT_ITERATIONS);

    private volatile CredentialStore store;
    /** Counts replace() calls: a check that started before one knows it must be made again. */
    private volatile long generation;
    private final boolean allowAnonymous;
    private volatile int cacheSize;
    private final Executor executor;
    private final ConcurrentHashMap<String, byte[]> verified = new ConcurrentHashMap<>();

    public enum Result { OK, BAD_CREDENTIALS, NOT_AUTHORIZED }

    public record Outcome(Result result, ClientIdentity identity) {
        static Outcome refused(Result result) {
            return new Outcome(result, null);
        }
    }

    public Authenticator(CredentialStore store, boolean allowAnonymous, int cacheSize, Executor executor) {
        this.store = store;
        this.allowAnonymous = allowAnonymous;
        this.cacheSize = cacheSize;
        this.executor = executor;
    }

    public CompletableFuture<Outcome> authenticate(String clientId, String username, byte[] password, X509Certificate cert) {
        if (cert != null) {
            String cn = commonName(cert);
            var entry = cn == null ? null : store.certificate(cn).orElse(null);
            if (entry != null) {
                return CompletableFuture.completedFuture(new Outcome(Result.OK, certificateIdentity(entry, clientId, cn)));
            }
        }
        if (username != null) {
            if (password == null) {
                return CompletableFuture.completedFuture(Outcome.refused(Result.BAD_CREDENTIALS));
            }
            return CompletableFuture.supplyAsync(() -> checkPassword(clientId, username, password), executor);
        }
        if (allowAnonymous) {
            return CompletableFuture.completedFuture(new Outcome(Result.OK, anonymousIdentity(store, clientId)));
        }
        return CompletableFuture.completedFuture(Outcome.refused(Result.NOT_AUTHORIZED));
    }

    /**
     * Credentials changed while the broker runs: from now on clients are checked against
     * {@code next}, and remembered password checks are forgotten (a password may have changed).
     */
    public void replace(CredentialStore next) {
        store = next;
        verified.clear();
        generation++;
    }

    /** A new size of the remembered password checks (tbmq.security.password-cache-size); a smaller one starts empty. */
    public void passwordCacheSize(int size) {
        if (size < cacheSize) {
            verified.clear();
        }
        cacheSize = size;
    }

    public long generation() {
        return generation;
    }

    /**
     * A connected client's identity under the current credentials: kept (with its permissions as
     * they are now) while the entry it authenticated with is still there unchanged, else revoked.
     */
    public Recheck recheck(ClientIdentity identity, String clientId) {
        CredentialStore now = store;
        ClientIdentity next = switch (identity.source()) {
            case CERTIFICATE -> now.certificate(identity.principal())
                    .map(entry -> certificateIdentity(entry, clientId, identity.principal())).orElse(null);
            case PASSWORD -> now.user(identity.principal())
                    .filter(user -> user.password().equals(identity.passwordHash()))
                    .map(user -> passwordIdentity(user, clientId)).orElse(null);
            case ANONYMOUS -> allowAnonymous ? anonymousIdentity(now, clientId) : null;
        };
        if (next == null) {
            return new Recheck.Revoke(switch (identity.source()) {
                case CERTIFICATE -> "certificate '" + identity.principal() + "' no longer allowed";
                case PASSWORD -> now.user(identity.principal()).isPresent() ? "password of '" + identity.principal() + "' changed"
                        : "user '" + identity.principal() + "' removed";
                case ANONYMOUS -> "anonymous access removed";
            });
        }
        if (next.type() != identity.type()) {
            return new Recheck.Revoke("client type changed to " + next.type());
        }
        return new Recheck.Keep(next);
    }

    private static ClientIdentity certificateIdentity(CredentialsFile.Certificate entry, String clientId, String cn) {
        return new ClientIdentity(cn, typeOrDefault(entry.clientType()), Acl.forClient(entry, clientId, cn),
                ClientIdentity.Source.CERTIFICATE, null);
    }

    private static ClientIdentity passwordIdentity(CredentialsFile.User user, String clientId) {
        return new ClientIdentity(user.username(), typeOrDefault(user.clientType()), Acl.forClient(user, clientId, user.username()),
                ClientIdentity.Source.PASSWORD, user.password());
    }

    private static ClientIdentity anonymousIdentity(CredentialStore store, String clientId) {
        var permissions = store.anonymous().orElse(null);
        Acl acl = permissions == null ? Acl.ALLOW_ALL : Acl.forClient(permissions, clientId, null);
        ClientType type = permissions == null ? ClientType.DEVICE : typeOrDefault(permissions.clientType());
        return new ClientIdentity(null, type, acl, ClientIdentity.Source.ANONYMOUS, null);
    }

    private Outcome checkPassword(String clientId, String username, byte[] password) {
        var user = store.user(username).orElse(null);
        char[] chars = new String(password, StandardCharsets.UTF_8).toCharArray();
        if (user == null) {
            PasswordHasher.verify(chars, DUMMY_HASH);
            return Outcome.refused(Result.BAD_CREDENTIALS);
        }
        // Bound to the stored hash: a check racing a replace() cannot let an old password in under a new hash.
        byte[] digest = sha256(username, user.password(), password);
        byte[] known = verified.get(username);
        boolean ok = known != null && MessageDigest.isEqual(known, digest);
        if (!ok) {
            ok = PasswordHasher.verify(chars, user.password());
            if (ok) {
                if (verified.size() >= cacheSize) {
                    verified.clear();
                }
                verified.put(username, digest);
            }
        }
        if (!ok) {
            return Outcome.refused(Result.BAD_CREDENTIALS);
        }
        return new Outcome(Result.OK, passwordIdentity(user, clientId));
    }

    private static ClientType typeOrDefault(ClientType type) {
        return type == null ? ClientType.DEVICE : type;
    }

    private static byte[] sha256(String username, String storedHash, byte[] password) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(username.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(storedHash.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            return md.digest(password);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String commonName(X509Certificate cert) {
        try {
            for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return rdn.getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }
}
