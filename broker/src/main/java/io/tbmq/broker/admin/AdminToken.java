package io.tbmq.broker.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.util.Optional;

/**
 * The admin API's bearer token: configured inline, or in a file (a mounted Secret) read again when
 * it changes, so a rotated token holds without a restart. No token at all: the API is off.
 */
public final class AdminToken {
    private final Optional<String> inline;
    private final Optional<Path> file;
    private FileTime readAt;
    private byte[] fromFile;

    public AdminToken(Optional<String> inline, Optional<String> file) {
        this.inline = inline.map(String::trim).filter(t -> !t.isEmpty());
        this.file = file.map(Path::of);
    }

    public boolean enabled() {
        return inline.isPresent() || file.isPresent();
    }

    /** Whether {@code authorization} (the header's value) is {@code Bearer <the token>}; compared in constant time. */
    public boolean accepts(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        byte[] expected = current();
        byte[] presented = authorization.substring(7).trim().getBytes(StandardCharsets.UTF_8);
        return expected != null && expected.length > 0 && MessageDigest.isEqual(expected, presented);
    }

    private synchronized byte[] current() {
        if (inline.isPresent()) {
            return inline.get().getBytes(StandardCharsets.UTF_8);
        }
        try {
            Path f = file.orElseThrow();
            FileTime modified = Files.getLastModifiedTime(f);
            if (!modified.equals(readAt)) {
                fromFile = Files.readString(f).trim().getBytes(StandardCharsets.UTF_8);
                readAt = modified;
            }
            return fromFile;
        } catch (IOException | RuntimeException e) {
            return null; // no readable token: nobody gets in
        }
    }
}
