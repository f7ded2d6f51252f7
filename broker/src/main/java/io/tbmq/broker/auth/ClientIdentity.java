package io.tbmq.broker.auth;

/**
 * Who a connection authenticated as.
 *
 * @param principal the user name, the certificate's common name, or null for an anonymous client
 */
public record ClientIdentity(String principal, ClientType type, Acl acl) {
}
