package io.tbmq.broker.auth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.tbmq.broker.topic.Topics;

/**
 * The loaded credentials file: users by name, certificate entries by common name, and the
 * permissions of anonymous clients. Loading validates every entry and fails with a message naming
 * the bad one, so a typo stops the broker at start rather than locking clients out later.
 */
public final class CredentialStore {
    private final Map<String, CredentialsFile.User> users = new HashMap<>();
    private final Map<String, CredentialsFile.Certificate> certificates = new HashMap<>();
    private final CredentialsFile.Permissions anonymous;

    private CredentialStore(CredentialsFile file) {
        for (CredentialsFile.User u : nullToEmpty(file.users())) {
            if (u.username() == null || u.username().isEmpty()) {
                throw new IllegalArgumentException("credentials: a user entry has no username");
            }
            if (!PasswordHasher.isWellFormed(u.password())) {
                throw new IllegalArgumentException("credentials: user '" + u.username()
                        + "' has no valid password hash (expected pbkdf2-sha256$..., made by `make passwd`)");
            }
            validatePatterns("user '" + u.username() + "'", u);
            if (users.put(u.username(), u) != null) {
                throw new IllegalArgumentException("credentials: user '" + u.username() + "' appears twice");
            }
        }
        for (CredentialsFile.Certificate c : nullToEmpty(file.certificates())) {
            if (c.commonName() == null || c.commonName().isEmpty()) {
                throw new IllegalArgumentException("credentials: a certificate entry has no commonName");
            }
            validatePatterns("certificate '" + c.commonName() + "'", c);
            certificates.put(c.commonName(), c);
        }
        this.anonymous = file.anonymous();
        if (anonymous != null) {
            validatePatterns("anonymous", anonymous);
        }
    }

    public static CredentialStore empty() {
        return new CredentialStore(new CredentialsFile(List.of(), List.of(), null));
    }

    public static CredentialStore parse(String yaml) {
        return new CredentialStore(read(yaml, "credentials"));
    }

    /** One credentials file's content and where it came from (named in errors). */
    public record Source(String name, String yaml) {
    }

    /**
     * Several files as one: the credentials file and the users file the operator writes from
     * TbmqUser resources. Users and certificate entries add up; a name in two files is an error
     * rather than a silent winner, and only the first file may set the anonymous permissions.
     */
    public static CredentialStore parse(List<Source> sources) {
        List<CredentialsFile.User> users = new java.util.ArrayList<>();
        List<CredentialsFile.Certificate> certificates = new java.util.ArrayList<>();
        Map<String, String> userFrom = new HashMap<>();
        Map<String, String> certificateFrom = new HashMap<>();
        CredentialsFile.Permissions anonymous = null;
        for (int i = 0; i < sources.size(); i++) {
            Source source = sources.get(i);
            CredentialsFile file = read(source.yaml(), source.name());
            for (CredentialsFile.User u : nullToEmpty(file.users())) {
                String before = u.username() == null ? null : userFrom.putIfAbsent(u.username(), source.name());
                if (before != null && !before.equals(source.name())) {
                    throw new IllegalArgumentException("credentials: user '" + u.username() + "' is in both " + before + " and "
                            + source.name());
                }
                users.add(u);
            }
            for (CredentialsFile.Certificate c : nullToEmpty(file.certificates())) {
                String before = c.commonName() == null ? null : certificateFrom.putIfAbsent(c.commonName(), source.name());
                if (before != null && !before.equals(source.name())) {
                    throw new IllegalArgumentException("credentials: certificate '" + c.commonName() + "' is in both " + before
                            + " and " + source.name());
                }
                certificates.add(c);
            }
            if (file.anonymous() != null && i > 0) {
                throw new IllegalArgumentException("credentials: " + source.name()
                        + " sets anonymous permissions; only the credentials file may");
            }
            anonymous = i == 0 ? file.anonymous() : anonymous;
        }
        return new CredentialStore(new CredentialsFile(users, certificates, anonymous));
    }

    private static CredentialsFile read(String yaml, String name) {
        try {
            ObjectMapper mapper = new ObjectMapper(new YAMLFactory())
                    .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
            CredentialsFile file = mapper.readValue(yaml, CredentialsFile.class);
            return file == null ? new CredentialsFile(List.of(), List.of(), null) : file;
        } catch (IOException e) {
            throw new IllegalArgumentException(name + ": cannot parse YAML: " + e.getMessage(), e);
        }
    }

    public static CredentialStore load(Path file) {
        try {
            return parse(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("credentials: cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static void validatePatterns(String owner, CredentialsFile.Grants grants) {
        for (List<String> list : List.of(nullToEmpty(grants.publish()), nullToEmpty(grants.subscribe()),
                nullToEmpty(grants.denyPublish()), nullToEmpty(grants.denySubscribe()))) {
            for (String pattern : list) {
                try {
                    Topics.parseFilter(pattern.replace("%c", "c").replace("%u", "u"), Integer.MAX_VALUE);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("credentials: " + owner + " has an invalid topic pattern '"
                            + pattern + "': " + e.getMessage());
                }
            }
        }
    }

    static <T> List<T> nullToEmpty(List<T> list) {
        return list == null ? List.of() : list;
    }

    public Optional<CredentialsFile.User> user(String username) {
        return Optional.ofNullable(users.get(username));
    }

    /** The entry for this common name, else the "*" entry, else none. */
    public Optional<CredentialsFile.Certificate> certificate(String commonName) {
        CredentialsFile.Certificate exact = certificates.get(commonName);
        return Optional.ofNullable(exact != null ? exact : certificates.get("*"));
    }

    public Optional<CredentialsFile.Permissions> anonymous() {
        return Optional.ofNullable(anonymous);
    }

    public int userCount() {
        return users.size();
    }

    public int certificateCount() {
        return certificates.size();
    }
}
