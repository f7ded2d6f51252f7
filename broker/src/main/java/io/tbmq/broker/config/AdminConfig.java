package io.tbmq.broker.config;

import java.util.Optional;

/**
 * The admin API on the HTTP port (sessions, disconnects, retained topics; docs/operations.md). Off
 * unless a token is configured: every request must carry it as {@code Authorization: Bearer <token>}.
 */
public interface AdminConfig {

    /** The token the admin API's callers present. Unset (and no token-file): the API answers 404. */
    Optional<String> token();

    /** A file holding the token (a mounted Secret); read again when it changes, so a rotated token applies without a restart. */
    Optional<String> tokenFile();
}
