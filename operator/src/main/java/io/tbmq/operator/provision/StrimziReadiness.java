package io.tbmq.operator.provision;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.strimzi.api.kafka.model.common.Condition;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.cruisecontrol.KafkaAutoRebalanceState;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;

/**
 * Whether the Kafka Strimzi runs for a TbmqCluster matches what the operator wrote, from what
 * Strimzi reports on every object: the Kafka (Ready for its generation), each node pool (reconciled
 * for its generation, with the nodes its spec asks for: a node-pool-only change leaves the Kafka's
 * generation as it was) and each topic (Ready for its generation). A Kafka without any status long
 * after it was created is one no Strimzi operator watches.
 */
public final class StrimziReadiness {
    public static final String REBALANCING = "KafkaRebalancing";
    /** Strimzi keeps the volumes as they are, and the Kafka Ready, when a storage change is not allowed: said as this notice. */
    public static final String STORAGE_NOT_APPLIED = "KafkaStorageNotApplied";
    /** The reason of Strimzi's warning condition about storage (a change it ignores). */
    static final String STRIMZI_STORAGE_WARNING = "KafkaStorage";

    private StrimziReadiness() {
    }

    public static ComponentStatus of(Kafka kafka, List<KafkaNodePool> pools, List<KafkaTopic> topics, int brokers, Instant now,
            Duration unwatchedAfter) {
        ComponentStatus status = readiness(kafka, pools, topics, brokers, now, unwatchedAfter);
        // Said while Strimzi still rolls or scales too, so the condition does not come and go with them.
        Optional<String> storage = kafka.getStatus() == null ? Optional.empty() : storageWarning(kafka, pools);
        return storage.isEmpty() ? status : status.with(new ComponentStatus.Notice(STORAGE_NOT_APPLIED, "StorageChangeIgnored",
                "spec.kafka.storage: Strimzi keeps the Kafka volumes as they are, ignoring every storage change while one of"
                        + " them is not allowed (" + storage.get() + "): a volume can only grow, where its StorageClass allows"
                        + " expansion, and keeps its class"));
    }

    private static ComponentStatus readiness(Kafka kafka, List<KafkaNodePool> pools, List<KafkaTopic> topics, int brokers,
            Instant now, Duration unwatchedAfter) {
        String name = kafka.getMetadata().getName();
        String summaryWaiting = "0/" + brokers;
        if (kafka.getStatus() == null) {
            Instant created = kafka.getMetadata().getCreationTimestamp() == null ? now
                    : Instant.parse(kafka.getMetadata().getCreationTimestamp());
            if (Duration.between(created, now).compareTo(unwatchedAfter) >= 0) {
                String ns = kafka.getMetadata().getNamespace();
                return waiting("StrimziNotWatching", "Kafka " + name + " has no status " + Duration.between(created, now).toMinutes()
                        + " min after it was created: no Strimzi cluster operator reconciles namespace " + ns
                        + ". Strimzi's default install watches only its own namespace: set STRIMZI_NAMESPACE of the "
                        + "strimzi-cluster-operator Deployment to include " + ns + " (or \"*\") and bind its roles there "
                        + "(docs/install.md, \"Strimzi\")", summaryWaiting);
            }
            return waiting("WaitingForStrimzi", "waiting for Strimzi to report Kafka " + name, summaryWaiting);
        }
        if (!readyForGeneration(kafka.getStatus().getConditions(), kafka.getStatus().getObservedGeneration(),
                kafka.getMetadata().getGeneration())) {
            return waiting("WaitingForStrimzi", "waiting for Strimzi to report Kafka " + name + " Ready"
                    + problem(kafka.getStatus().getConditions()).map(p -> " (Strimzi: " + p + ")").orElse(""), summaryWaiting);
        }
        int brokersUp = brokers;
        for (KafkaNodePool pool : pools) {
            String pn = pool.getMetadata().getName();
            var st = pool.getStatus();
            Long generation = pool.getMetadata().getGeneration();
            if (st == null || generation != null && st.getObservedGeneration() < generation) {
                return waiting("WaitingForStrimzi", "waiting for Strimzi to reconcile node pool " + pn, summaryWaiting);
            }
            int wanted = pool.getSpec().getReplicas();
            if (st.getReplicas() != wanted) {
                return waiting("ScalingKafka", "node pool " + pn + " has " + st.getReplicas() + " of " + wanted + " nodes"
                        + (st.getReplicas() > wanted ? "; Strimzi removes brokers once Cruise Control moved their partitions off"
                                : ""), Math.min(st.getReplicas(), brokers) + "/" + brokers);
            }
        }
        for (KafkaTopic topic : topics) {
            var st = topic.getStatus();
            if (st == null || !readyForGeneration(st.getConditions(), st.getObservedGeneration(), topic.getMetadata().getGeneration())) {
                return waiting("WaitingForTopics", "waiting for the topic operator to report topic "
                        + topic.getSpec().getTopicName() + " Ready"
                        + (st == null ? "" : problem(st.getConditions()).map(p -> " (" + p + ")").orElse("")), brokersUp + "/" + brokers);
            }
        }
        ComponentStatus ready = new ComponentStatus(KafkaProvisioner.CONDITION, true, "KafkaReady",
                "Kafka " + name + ", its node pools and topics are ready", brokers + "/" + brokers);
        var rebalance = kafka.getStatus().getAutoRebalance();
        if (rebalance != null && rebalance.getState() != null && rebalance.getState() != KafkaAutoRebalanceState.Idle) {
            String modes = rebalance.getModes() == null ? "" : rebalance.getModes().stream()
                    .map(m -> m.getMode() + " " + m.getBrokers()).reduce((a, b) -> a + ", " + b).map(m -> " (" + m + ")").orElse("");
            ready = ready.with(new ComponentStatus.Notice(REBALANCING, rebalance.getState().toString(),
                    "Cruise Control is moving partitions" + modes + " since " + rebalance.getLastTransitionTime()));
        }
        return ready;
    }

    /** Strimzi's warning that it ignores a storage change, on the Kafka or one of its node pools. */
    private static Optional<String> storageWarning(Kafka kafka, List<KafkaNodePool> pools) {
        List<List<Condition>> all = new java.util.ArrayList<>();
        all.add(kafka.getStatus().getConditions());
        for (KafkaNodePool pool : pools) {
            if (pool.getStatus() != null) {
                all.add(pool.getStatus().getConditions());
            }
        }
        return all.stream().filter(Objects::nonNull).flatMap(List::stream)
                .filter(c -> "Warning".equals(c.getType()) && STRIMZI_STORAGE_WARNING.equals(c.getReason()))
                .map(c -> "Strimzi: " + Objects.toString(c.getMessage(), "")).findFirst();
    }

    private static ComponentStatus waiting(String reason, String message, String summary) {
        return new ComponentStatus(KafkaProvisioner.CONDITION, false, reason, message, summary);
    }

    /** Ready=True, observed at (or after) the generation last written: a Ready from before the last change does not count. */
    static boolean readyForGeneration(List<Condition> conditions, long observed, Long generation) {
        if (conditions == null || generation != null && observed < generation) {
            return false;
        }
        return conditions.stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** What Strimzi says is wrong: a NotReady or Ready=False condition's message, or a warning's. */
    private static Optional<String> problem(List<Condition> conditions) {
        if (conditions == null) {
            return Optional.empty();
        }
        return conditions.stream()
                .filter(c -> "NotReady".equals(c.getType()) && "True".equals(c.getStatus())
                        || "Ready".equals(c.getType()) && "False".equals(c.getStatus()) || "Warning".equals(c.getType()))
                .map(c -> Objects.toString(c.getReason(), "") + ": " + Objects.toString(c.getMessage(), "")).findFirst();
    }
}
