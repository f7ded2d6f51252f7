package io.tbmq.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Strimzi 1.2.0's own CRDs (Kafka, KafkaNodePool, KafkaTopic, KafkaRebalance) with their full
 * schemas, generated at build time from io.strimzi:api by Strimzi's CRD generator (e2e/pom.xml):
 * the API server validates every Strimzi object the operator writes as a Strimzi install would.
 */
final class StrimziCrds {
    static final List<String> FILES = List.of("040-Crd-kafka.yaml", "043-Crd-kafkatopic.yaml", "045-Crd-kafkanodepool.yaml",
            "049-Crd-kafkarebalance.yaml");

    private StrimziCrds() {
    }

    static Path directory() {
        return Path.of(System.getProperty("tbmq.strimzi-crds", "target/strimzi-crds"));
    }

    static void install(KubernetesClient client) throws IOException {
        for (String file : FILES) {
            Path path = directory().resolve(file);
            if (!Files.exists(path)) {
                throw new IllegalStateException(path + " missing: the e2e build generates it (mvn -pl e2e generate-test-resources)");
            }
            try (InputStream in = Files.newInputStream(path)) {
                client.load(in).serverSideApply();
            }
        }
    }
}
