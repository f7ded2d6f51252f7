package io.tbmq.operator.provision;

import java.util.List;
import java.util.Objects;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.KafkaModel;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.sizing.Plan;

/**
 * Kafka through Strimzi: the Kafka, its node pool and the broker topics. Partitions only grow: a plan
 * with fewer than the topics have keeps the topics as they are and says so.
 */
public final class KafkaProvisioner {
    public static final String CONDITION = "KafkaReady";
    private final Applier applier;
    private final EventRecorder events;

    public KafkaProvisioner(Applier applier, EventRecorder events) {
        this.applier = applier;
        this.events = events;
    }

    /** Partitions the topics have now (0 when they do not exist yet). */
    public int currentPartitions(TbmqCluster owner, Names names) {
        if (owner.getSpec().getKafka().getMode() == Mode.EXTERNAL) {
            return 0;
        }
        try {
            KafkaTopic t = applier.client().resources(KafkaTopic.class).inNamespace(names.namespace())
                    .withName(names.kafkaTopic(KafkaModel.MSG_ALL)).get();
            return t == null || t.getSpec() == null || t.getSpec().getPartitions() == null ? 0 : t.getSpec().getPartitions();
        } catch (KubernetesClientException e) {
            return 0; // Strimzi not installed: reported by reconcile()
        }
    }

    public ComponentStatus reconcile(TbmqCluster owner, Plan plan, Names names, int partitions) {
        if (owner.getSpec().getKafka().getMode() == Mode.EXTERNAL) {
            return ComponentStatus.external(CONDITION);
        }
        int brokers = plan.kafkaBrokers().value();
        Kafka kafka;
        try {
            KafkaNodePool pool = KafkaModel.nodePool(owner, plan, names);
            KafkaNodePool before = applier.current(pool);
            applier.apply(pool);
            if (before != null && before.getSpec().getReplicas() != brokers) {
                events.normal(owner, "ScalingKafka", "Kafka brokers " + before.getSpec().getReplicas() + " -> " + brokers
                        + " (" + plan.kafkaBrokers().rule() + ")");
            }
            kafka = applier.apply(KafkaModel.kafka(owner, plan, names));
            for (KafkaTopic topic : KafkaModel.topics(owner, plan, names, partitions)) {
                KafkaTopic old = applier.current(topic);
                applier.apply(topic);
                Integer was = old == null || old.getSpec() == null ? null : old.getSpec().getPartitions();
                if (was != null && !Objects.equals(was, topic.getSpec().getPartitions())) {
                    events.normal(owner, "PartitionsRaised", "topic " + topic.getSpec().getTopicName() + " partitions "
                            + was + " -> " + topic.getSpec().getPartitions());
                }
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return new ComponentStatus(CONDITION, false, "StrimziNotInstalled",
                        "spec.kafka.mode MANAGED needs the Strimzi operator: the kafka.strimzi.io/v1 resources are not "
                                + "installed. Install Strimzi, or set spec.kafka.mode: EXTERNAL with spec.kafka.bootstrapServers.",
                        "0/" + brokers);
            }
            throw e;
        }
        boolean ready = isReady(kafka);
        return new ComponentStatus(CONDITION, ready, ready ? "KafkaReady" : "WaitingForStrimzi",
                ready ? "Kafka " + names.kafka() + " is ready" : "waiting for Strimzi to report Kafka " + names.kafka() + " Ready",
                (ready ? brokers : 0) + "/" + brokers);
    }

    /** Ready for the generation we wrote: a Ready from before the last change does not count. */
    static boolean isReady(Kafka kafka) {
        if (kafka == null || kafka.getStatus() == null || kafka.getStatus().getConditions() == null) {
            return false;
        }
        long observed = kafka.getStatus().getObservedGeneration();
        Long generation = kafka.getMetadata().getGeneration();
        if (generation != null && observed < generation) {
            return false;
        }
        List<io.strimzi.api.kafka.model.common.Condition> conditions = kafka.getStatus().getConditions();
        return conditions.stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }
}
