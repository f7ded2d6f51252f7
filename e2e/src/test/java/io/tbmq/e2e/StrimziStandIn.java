package io.tbmq.e2e;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.strimzi.api.kafka.model.common.ConditionBuilder;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.KafkaStatusBuilder;

/**
 * Plays the Strimzi operator's part the TBMQ operator relies on: a Kafka CR becomes Ready for the
 * generation it was last written at.
 */
final class StrimziStandIn implements AutoCloseable {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "strimzi-stand-in");
        t.setDaemon(true);
        return t;
    });

    StrimziStandIn(KubernetesClient client, String namespace) {
        timer.scheduleWithFixedDelay(() -> markReady(client, namespace), 200, 300, TimeUnit.MILLISECONDS);
    }

    private static void markReady(KubernetesClient client, String namespace) {
        try {
            for (Kafka kafka : client.resources(Kafka.class).inNamespace(namespace).list().getItems()) {
                long generation = kafka.getMetadata().getGeneration();
                if (kafka.getStatus() != null && kafka.getStatus().getObservedGeneration() >= generation) {
                    continue;
                }
                kafka.setStatus(new KafkaStatusBuilder().withObservedGeneration(generation)
                        .withConditions(new ConditionBuilder().withType("Ready").withStatus("True").build()).build());
                client.resource(kafka).updateStatus();
            }
        } catch (KubernetesClientException e) {
            // a conflict with the operator's own write: next round
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
