package io.tbmq.operator.provision;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.nodepool.ProcessRoles;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.KafkaModel;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.TopicPartitions;
import io.tbmq.operator.sizing.Plan;

/**
 * Kafka through Strimzi: the Kafka, its controller and broker pools, the rebalance template and the
 * broker topics. Partitions only grow: a plan with fewer than the topics have keeps the topics as
 * they are and says so. A TbmqCluster made by an earlier version has one pool with both roles;
 * Strimzi cannot scale such a pool, so it is kept as it is and a condition says how to migrate.
 */
public final class KafkaProvisioner {
    public static final String CONDITION = "KafkaReady";
    public static final String SCALING_REFUSED = "KafkaScalingRefused";
    public static final String UNUSED = "UnusedKafka";
    private final Applier applier;
    private final EventRecorder events;
    private final Duration unwatchedAfter;

    public KafkaProvisioner(Applier applier, EventRecorder events, Duration unwatchedAfter) {
        this.applier = applier;
        this.events = events;
        this.unwatchedAfter = unwatchedAfter;
    }

    /**
     * A Kafka this TbmqCluster managed before its spec switched to EXTERNAL keeps running (an edit
     * must not delete data) until the user asks for its deletion by annotation.
     */
    private ComponentStatus unused(TbmqCluster owner, Names names) {
        ComponentStatus external = ComponentStatus.external(CONDITION);
        Kafka left;
        try {
            left = applier.client().resources(Kafka.class).inNamespace(names.namespace()).withName(names.kafka()).get();
        } catch (KubernetesClientException e) {
            return external; // Strimzi not installed: nothing can be left
        }
        if (left == null || !owner.getMetadata().getUid().equals(ownerUid(left))) {
            return external;
        }
        if (!owner.deleteUnused("kafka")) {
            return external.with(new ComponentStatus.Notice(UNUSED, "Kept", "the managed Kafka " + names.kafka()
                    + " keeps running (with its volumes) though spec.kafka.mode is EXTERNAL; to delete it: kubectl annotate tbmq "
                    + owner.getMetadata().getName() + " " + TbmqCluster.DELETE_UNUSED + "=kafka"));
        }
        KafkaTeardown teardown = new KafkaTeardown(applier.client(), events);
        if (teardown.topicsGone(owner, names, Instant.now())) {
            teardown.deleteKafka(names, owner.getMetadata().getName());
            events.normal(owner, "UnusedKafkaDeleted", "deleted the managed Kafka " + names.kafka() + " as " + TbmqCluster.DELETE_UNUSED
                    + " asked");
        }
        return external.with(new ComponentStatus.Notice(UNUSED, "Deleting", "deleting the managed Kafka " + names.kafka()
                + " (its KafkaTopics first)"));
    }

    private static String ownerUid(io.fabric8.kubernetes.api.model.HasMetadata o) {
        return o.getMetadata().getOwnerReferences() == null ? null : o.getMetadata().getOwnerReferences().stream()
                .filter(r -> Boolean.TRUE.equals(r.getController())).map(r -> r.getUid()).findFirst().orElse(null);
    }

    /**
     * Partitions the topic of {@code suffix} (a {@link KafkaModel} topic) has now: 0 when it does not exist
     * yet. A read that fails otherwise is thrown, not taken for 0: that would ask Kafka to remove partitions.
     */
    public int currentPartitions(TbmqCluster owner, Names names, String suffix) {
        if (owner.getSpec().getKafka().getMode() == Mode.EXTERNAL) {
            return 0;
        }
        try {
            KafkaTopic t = applier.client().resources(KafkaTopic.class).inNamespace(names.namespace())
                    .withName(names.kafkaTopic(suffix)).get();
            return t == null || t.getSpec() == null || t.getSpec().getPartitions() == null ? 0 : t.getSpec().getPartitions();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return 0; // Strimzi not installed (fabric8 answers most 404s with null): reported by reconcile()
            }
            throw e;
        }
    }

    public ComponentStatus reconcile(TbmqCluster owner, Plan plan, Names names, TopicPartitions partitions) {
        if (owner.getSpec().getKafka().getMode() == Mode.EXTERNAL) {
            return unused(owner, names);
        }
        int brokers = plan.kafkaBrokers().value();
        Kafka kafka;
        List<KafkaNodePool> pools = new ArrayList<>();
        List<KafkaTopic> topics = new ArrayList<>();
        ComponentStatus.Notice refused = null;
        try {
            KafkaNodePool combined = applier.client().resources(KafkaNodePool.class).inNamespace(names.namespace())
                    .withName(names.kafkaCombinedPool()).get();
            if (combined != null && combined.getSpec().getRoles().contains(ProcessRoles.CONTROLLER)) {
                // Scaling a pool with the controller role is not supported by Strimzi (static quorum): keep it.
                pools.add(combined);
                int current = combined.getSpec().getReplicas();
                brokers = current;
                if (current != plan.kafkaBrokers().value()) {
                    refused = new ComponentStatus.Notice(SCALING_REFUSED, "CombinedNodePool", "the plan asks for "
                            + plan.kafkaBrokers().value() + " Kafka brokers but node pool " + combined.getMetadata().getName()
                            + " has both the controller and broker roles and Strimzi cannot scale it; it stays at " + current
                            + ". Migrate to separate pools as docs/operator.md (\"Kafka node pools\") describes.");
                }
            } else {
                pools.add(applier.apply(KafkaModel.controllerPool(owner, names)));
                KafkaNodePool desired = KafkaModel.brokerPool(owner, plan, names);
                KafkaNodePool before = applier.current(desired);
                // Events go before the write they announce, so an operator stopped in between still records them.
                if (before != null && before.getSpec().getReplicas() != brokers) {
                    events.normal(owner, "ScalingKafka", "Kafka brokers " + before.getSpec().getReplicas() + " -> " + brokers
                            + " (" + plan.kafkaBrokers().rule() + ")");
                }
                pools.add(applier.apply(desired));
            }
            applier.apply(KafkaModel.rebalanceTemplate(owner, names));
            kafka = applier.apply(KafkaModel.kafka(owner, plan, names));
            for (KafkaTopic topic : KafkaModel.topics(owner, plan, names, partitions)) {
                KafkaTopic old = applier.current(topic);
                Integer was = old == null || old.getSpec() == null ? null : old.getSpec().getPartitions();
                if (was != null && !Objects.equals(was, topic.getSpec().getPartitions())) {
                    events.normal(owner, "PartitionsRaised", "topic " + topic.getSpec().getTopicName() + " partitions "
                            + was + " -> " + topic.getSpec().getPartitions());
                }
                topics.add(applier.apply(topic));
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
        ComponentStatus status = StrimziReadiness.of(kafka, pools, topics, brokers, Instant.now(), unwatchedAfter);
        return refused == null ? status : status.with(refused);
    }
}
