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

    /**
     * A second file of the same format, users and certificate entries only, added to the
     * credentials: on Kubernetes the one the operator writes from TbmqUser resources. It is
     * watched like the credentials file; a user or common name in both is an error (the broker
     * does not start; a change that introduces one is refused and the credentials in force stay).
     */
    Optional<String> usersFile();

    /** Successful password checks remembered (by a SHA-256 of the password) so reconnects skip PBKDF2. */
    @WithDefault("10000")
    int passwordCacheSize();

    /**
     * How often the credentials file and the TLS listeners' PEM files are checked for changes. A
     * change applies without a restart: new connections use it, connected clients whose entry was
     * removed or changed are disconnected (v5 reason 0x87), and narrowed ACLs hold from the next packet.
     */
    @WithDefault("10s")
    java.time.Duration reloadInterval();

    /** Threads that verify passwords off the I/O threads (0 verifies on the I/O thread: tests only). */
    @WithDefault("2")
    int authThreads();
}
