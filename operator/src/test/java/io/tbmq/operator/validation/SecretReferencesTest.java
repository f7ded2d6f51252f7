package io.tbmq.operator.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqClusterSpec;

class SecretReferencesTest {

    private static Secret secret(String name, String... keys) {
        SecretBuilder b = new SecretBuilder().withNewMetadata().withName(name).endMetadata();
        for (String k : keys) {
            b.addToData(k, "eA==");
        }
        return b.build();
    }

    private static TbmqClusterSpec spec() {
        TbmqClusterSpec spec = new TbmqClusterSpec();
        spec.setTargetThroughput(1000);
        spec.getBroker().setCredentialsSecret("users");
        spec.getBroker().setTlsSecret("tls");
        return spec;
    }

    @Test
    void presentSecretsWithTheirKeysPass() {
        Map<String, Secret> secrets = Map.of("users", secret("users", "credentials.yaml"), "tls", secret("tls", "tls.crt", "tls.key"));
        assertThat(SecretReferences.check(spec(), secrets::get)).isEmpty();
    }

    @Test
    void aMissingSecretOrKeyIsNamedByItsField() {
        Map<String, Secret> secrets = Map.of("tls", secret("tls", "tls.crt"));
        assertThat(SecretReferences.check(spec(), secrets::get)).extracting(FieldError::toString).containsExactly(
                "spec.broker.tlsSecret: Secret 'tls' has no key 'tls.key'",
                "spec.broker.credentialsSecret: Secret 'users' not found in the TbmqCluster's namespace");
    }

    @Test
    void theKafkaClientSecretCountsOnlyForAnExternalKafka() {
        TbmqClusterSpec spec = spec();
        spec.getBroker().setTlsSecret(null);
        spec.getKafka().setClientSecret("kafka-client");
        Map<String, Secret> secrets = Map.of("users", secret("users", "credentials.yaml"));
        assertThat(SecretReferences.check(spec, secrets::get)).isEmpty();
        spec.getKafka().setMode(Mode.EXTERNAL);
        spec.getKafka().setBootstrapServers("kafka:9092");
        assertThat(SecretReferences.check(spec, secrets::get)).extracting(FieldError::field).containsExactly("spec.kafka.clientSecret");
    }

    @Test
    void theAdminSecretNeedsItsTokenKey() {
        TbmqClusterSpec spec = spec();
        spec.getBroker().setAdminSecret("admin");
        Map<String, Secret> secrets = Map.of("users", secret("users", "credentials.yaml"), "tls", secret("tls", "tls.crt", "tls.key"),
                "admin", secret("admin", "password"));
        assertThat(SecretReferences.check(spec, secrets::get)).extracting(FieldError::toString)
                .containsExactly("spec.broker.adminSecret: Secret 'admin' has no key 'token'");
    }

    @Test
    void aPasswordTokenOrCertificateThatIsEmptyIsNamedByItsFieldButAnEmptyUsersFileIsValid() {
        // The Redis password Secret would otherwise pass here and fail half-way through a reconcile, after Kafka was changed.
        TbmqClusterSpec spec = spec();
        spec.getRedis().setPasswordSecret("redis");
        spec.getBroker().setAdminSecret("admin");
        Secret tls = secret("tls", "tls.crt");
        tls.getData().put("tls.key", "");
        Map<String, Secret> secrets = Map.of("users", new SecretBuilder().withNewMetadata().withName("users").endMetadata()
                .addToData("credentials.yaml", "").build(), "tls", tls,
                "admin", new SecretBuilder().withNewMetadata().withName("admin").endMetadata().addToStringData("token", "").build(),
                "redis", new SecretBuilder().withNewMetadata().withName("redis").endMetadata().addToData("password", "").build());
        assertThat(SecretReferences.check(spec, secrets::get)).extracting(FieldError::toString).containsExactly(
                "spec.broker.tlsSecret: Secret 'tls' has an empty 'tls.key'",
                "spec.broker.adminSecret: Secret 'admin' has an empty 'token'",
                "spec.redis.passwordSecret: Secret 'redis' has an empty 'password'");
    }
}
