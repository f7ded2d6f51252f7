package io.tbmq.broker.auth;

/** What a connected client's identity becomes under changed credentials. */
public sealed interface Recheck {

    /** Still allowed, with the permissions it has now (possibly narrowed or widened). */
    record Keep(ClientIdentity identity) implements Recheck {
    }

    /** No longer allowed to be connected; {@code reason} is told to the client (v5) and logged. */
    record Revoke(String reason) implements Recheck {
    }
}
