package io.tbmq.broker.auth;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The YAML credentials file (docs/security.md):
 *
 * <pre>
 * users:
 *   - username: plant-7
 *     password: "pbkdf2-sha256$100000$..."   # make passwd
 *     clientType: DEVICE                      # or APPLICATION
 *     publish: ["plants/7/%c/#"]              # %c client id, %u user name
 *     subscribe: ["commands/%c/#"]
 * certificates:                               # X.509 clients on TLS listeners, by common name
 *   - commonName: sensor-1                    # "*" matches any certificate from a trusted CA
 *     publish: ["sensors/%c/#"]
 * anonymous:                                  # only with tbmq.security.allow-anonymous=true
 *   publish: ["public/#"]
 *   subscribe: ["public/#"]
 * </pre>
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record CredentialsFile(List<User> users, List<Certificate> certificates, Permissions anonymous) {

    public record User(String username, String password, ClientType clientType, List<String> publish, List<String> subscribe) {
    }

    public record Certificate(String commonName, ClientType clientType, List<String> publish, List<String> subscribe) {
    }

    public record Permissions(ClientType clientType, List<String> publish, List<String> subscribe) {
    }
}
