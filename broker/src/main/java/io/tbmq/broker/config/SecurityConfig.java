package io.tbmq.broker.config;

import java.util.Optional;

import io.smallrye.config.WithDefault;

/** Authentication and authorization: who may connect, publish and subscribe. */
public interface SecurityConfig {

    /** Accept clients without credentials. Off by default: every client must authenticate. */
    @WithDefault("false")
    boolean allowAnonymous();

    /** YAML credentials file: users with hashed passwords, certificate common names, ACLs (docs/security.md). */
    Optional<String> credentialsFile();

    /** The same YAML inline, for example from a Kubernetes Secret in an environment variable. */
    Optional<String> credentials();

    /** Successful password checks remembered (by a SHA-256 of the password) so reconnects skip PBKDF2. */
    @WithDefault("10000")
    int passwordCacheSize();

    /** Threads that verify passwords off the I/O threads (0 verifies on the I/O thread: tests only). */
    @WithDefault("2")
    int authThreads();
}
