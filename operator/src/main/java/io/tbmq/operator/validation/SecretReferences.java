package io.tbmq.operator.validation;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.Secret;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqClusterSpec;

/**
 * Checks that every Secret the spec names exists with the keys the pods will read. A missing one
 * would leave a rolled pod unable to start, so it is reported like an invalid field and nothing is
 * changed until it is there.
 */
public final class SecretReferences {
    private SecretReferences() {
    }

    /** @param lookup the Secret of that name in the TbmqCluster's namespace, or null */
    public static List<FieldError> check(TbmqClusterSpec spec, Function<String, Secret> lookup) {
        List<FieldError> errors = new ArrayList<>();
        var broker = spec.getBroker();
        require(errors, lookup, "spec.broker.tlsSecret", broker.getTlsSecret(), true, "tls.crt", "tls.key");
        // An empty credentials file is a valid one (no users yet, TbmqUsers may add them).
        require(errors, lookup, "spec.broker.credentialsSecret", broker.getCredentialsSecret(), false, "credentials.yaml");
        require(errors, lookup, "spec.broker.adminSecret", broker.getAdminSecret(), true, "token");
        if (spec.getKafka().getMode() == Mode.EXTERNAL) {
            require(errors, lookup, "spec.kafka.clientSecret", spec.getKafka().getClientSecret(), false, "client.properties");
        }
        require(errors, lookup, "spec.redis.passwordSecret", spec.getRedis().getPasswordSecret(), true, "password");
        return errors;
    }

    /** {@code nonEmpty}: an empty value is refused too (a certificate, a token or a password cannot be empty). */
    private static void require(List<FieldError> errors, Function<String, Secret> lookup, String field, String name,
            boolean nonEmpty, String... keys) {
        if (name == null || name.isBlank()) {
            return;
        }
        Secret secret = lookup.apply(name);
        if (secret == null) {
            errors.add(new FieldError(field, "Secret '" + name + "' not found in the TbmqCluster's namespace"));
            return;
        }
        for (String key : keys) {
            String data = secret.getData() == null ? null : secret.getData().get(key);
            String stringData = secret.getStringData() == null ? null : secret.getStringData().get(key);
            boolean present = (secret.getData() != null && secret.getData().containsKey(key))
                    || (secret.getStringData() != null && secret.getStringData().containsKey(key));
            if (!present) {
                errors.add(new FieldError(field, "Secret '" + name + "' has no key '" + key + "'"));
            } else if (nonEmpty && (data == null || data.isEmpty()) && (stringData == null || stringData.isEmpty())) {
                errors.add(new FieldError(field, "Secret '" + name + "' has an empty '" + key + "'"));
            }
        }
    }
}
