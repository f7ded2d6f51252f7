package io.tbmq.operator.provision;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.rebalance.KafkaRebalance;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.Labels;
import io.tbmq.operator.desired.Names;

/**
 * Removes a managed Kafka in the one order that cannot hang: the KafkaTopics first, while the
 * topic operator (part of the Kafka's entity operator) still runs and can delete them in Kafka and
 * drop its finalizer; deleted with or after the Kafka, they would keep that finalizer forever. A
 * topic that still waits after a bound (the topic operator is gone or never ran) loses the
 * finalizer, with a warning event, so deleting a TbmqCluster never hangs.
 */
public final class KafkaTeardown {
    public static final String TOPIC_FINALIZER = "strimzi.io/topic-operator";
    static final Duration TOPIC_WAIT = Duration.ofSeconds(60);
    private static final Logger LOG = Logger.getLogger(KafkaTeardown.class);

    private final KubernetesClient client;
    private final EventRecorder events;

    public KafkaTeardown(KubernetesClient client, EventRecorder events) {
        this.client = client;
        this.events = events;
    }

    /** One step of removing the KafkaTopics of {@code owner}; true once none is left. */
    public boolean topicsGone(TbmqCluster owner, Names names, Instant now) {
        List<KafkaTopic> topics;
        try {
            topics = client.resources(KafkaTopic.class).inNamespace(names.namespace())
                    .withLabel(Labels.INSTANCE, owner.getMetadata().getName()).list().getItems();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return true; // Strimzi's CRDs are not installed: there is nothing to remove
            }
            throw e;
        }
        if (topics.isEmpty()) {
            return true;
        }
        boolean topicOperatorRuns = topicOperatorRuns(names);
        List<String> released = new ArrayList<>();
        for (KafkaTopic topic : topics) {
            String deleting = topic.getMetadata().getDeletionTimestamp();
            if (deleting == null) {
                client.resource(topic).delete();
                continue;
            }
            boolean waitedLong = Duration.between(Instant.parse(deleting), now).compareTo(TOPIC_WAIT) >= 0;
            if ((waitedLong || !topicOperatorRuns) && topic.getMetadata().getFinalizers().contains(TOPIC_FINALIZER)) {
                client.resource(topic).edit(t -> {
                    t.getMetadata().getFinalizers().remove(TOPIC_FINALIZER);
                    return t;
                });
                released.add(topic.getMetadata().getName());
            }
        }
        if (!released.isEmpty()) {
            events.warning(owner, "TopicFinalizersRemoved", "KafkaTopics " + released + " were not removed by the topic operator "
                    + (topicOperatorRuns ? "within " + TOPIC_WAIT.toSeconds() + " s" : "(the Kafka is gone or not ready)")
                    + "; their finalizer was removed so the deletion completes. The topics may remain in Kafka.");
        }
        LOG.debugf("%s/%s: waiting for %d KafkaTopics to go", names.namespace(), names.cluster(), topics.size());
        return false;
    }

    /** The Kafka exists, is not being deleted and is Ready: its topic operator can act. */
    private boolean topicOperatorRuns(Names names) {
        Kafka kafka = client.resources(Kafka.class).inNamespace(names.namespace()).withName(names.kafka()).get();
        return kafka != null && kafka.getMetadata().getDeletionTimestamp() == null && kafka.getStatus() != null
                && kafka.getStatus().getConditions() != null
                && kafka.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** Deletes the Kafka and what goes with it (topics must be gone first: {@link #topicsGone}). */
    public void deleteKafka(Names names, String cluster) {
        client.resources(KafkaRebalance.class).inNamespace(names.namespace()).withName(names.kafkaRebalanceTemplate()).delete();
        client.resources(Kafka.class).inNamespace(names.namespace()).withName(names.kafka()).delete();
        client.resources(KafkaNodePool.class).inNamespace(names.namespace()).withLabel(Labels.INSTANCE, cluster).delete();
    }
}
