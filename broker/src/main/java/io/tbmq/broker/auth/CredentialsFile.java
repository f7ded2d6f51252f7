package io.tbmq.broker.auth;

import java.util.List;

/**
 * The YAML credentials file (docs/security.md):
 *
 * <pre>
 * users:
 *   - username: plant-7
 *     password: "pbkdf2-sha256$100000$..."   # make passwd
 *     clientType: DEVICE                      # or APPLICATION
 *     publish: ["plants/7/%c/#"]              # allowed; %c client id, %u user name
 *     subscribe: ["commands/%c/#"]
 *     denySubscribe: ["commands/%c/secret"]   # deny wins over allow
 * certificates:                               # X.509 clients on TLS listeners, by common name
 *   - commonName: sensor-1                    # "*" matches any certificate from a trusted CA
 *     publish: ["sensors/%c/#"]
 * anonymous:                                  # only with tbmq.security.allow-anonymous=true
 *   publish: ["public/#"]
 *   subscribe: ["public/#"]
 * </pre>
 */
public record CredentialsFile(List<User> users, List<Certificate> certificates, Permissions anonymous) {

    /** What an entry grants; every list may be absent (empty). */
    public interface Grants {
        ClientType clientType();

        List<String> publish();

        List<String> subscribe();

        List<String> denyPublish();

        List<String> denySubscribe();
    }

    public record User(String username, String password, ClientType clientType, List<String> publish,
            List<String> subscribe, List<String> denyPublish, List<String> denySubscribe) implements Grants {
    }

    public record Certificate(String commonName, ClientType clientType, List<String> publish, List<String> subscribe,
            List<String> denyPublish, List<String> denySubscribe) implements Grants {
    }

    public record Permissions(ClientType clientType, List<String> publish, List<String> subscribe,
            List<String> denyPublish, List<String> denySubscribe) implements Grants {
    }
}
