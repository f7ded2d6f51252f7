package io.tbmq.broker.auth;

/**
 * Who a connection authenticated as, and how, so it can be checked again when the credentials
 * change while it is connected.
 *
 * @param principal the user name, the certificate's common name, or null for an anonymous client
 * @param source how the client proved who it is
 * @param passwordHash the stored hash its password matched (PASSWORD only): a changed hash means a
 *        changed password, and connections made with the old one are closed
 */
public record ClientIdentity(String principal, ClientType type, Acl acl, Source source, String passwordHash) {

    public enum Source { CERTIFICATE, PASSWORD, ANONYMOUS }
}
