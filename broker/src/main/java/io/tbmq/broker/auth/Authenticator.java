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

    private final CredentialStore store;
    private final boolean allowAnonymous;
    private final int cacheSize;
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
                return CompletableFuture.completedFuture(new Outcome(Result.OK,
                        new ClientIdentity(cn, typeOrDefault(entry.clientType()), Acl.forClient(entry, clientId, cn))));
            }
        }
        if (username != null) {
            if (password == null) {
                return CompletableFuture.completedFuture(Outcome.refused(Result.BAD_CREDENTIALS));
            }
            return CompletableFuture.supplyAsync(() -> checkPassword(clientId, username, password), executor);
        }
        if (allowAnonymous) {
            var permissions = store.anonymous().orElse(null);
            Acl acl = permissions == null ? Acl.ALLOW_ALL : Acl.forClient(permissions, clientId, null);
            ClientType type = permissions == null ? ClientType.DEVICE : typeOrDefault(permissions.clientType());
            return CompletableFuture.completedFuture(new Outcome(Result.OK, new ClientIdentity(null, type, acl)));
        }
        return CompletableFuture.completedFuture(Outcome.refused(Result.NOT_AUTHORIZED));
    }

    private Outcome checkPassword(String clientId, String username, byte[] password) {
        var user = store.user(username).orElse(null);
        char[] chars = new String(password, StandardCharsets.UTF_8).toCharArray();
        if (user == null) {
            PasswordHasher.verify(chars, DUMMY_HASH);
            return Outcome.refused(Result.BAD_CREDENTIALS);
        }
        byte[] digest = sha256(username, password);
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
        return new Outcome(Result.OK, new ClientIdentity(username, typeOrDefault(user.clientType()),
                Acl.forClient(user, clientId, username)));
    }

    private static ClientType typeOrDefault(ClientType type) {
        return type == null ? ClientType.DEVICE : type;
    }

    private static byte[] sha256(String username, byte[] password) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(username.getBytes(StandardCharsets.UTF_8));
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
