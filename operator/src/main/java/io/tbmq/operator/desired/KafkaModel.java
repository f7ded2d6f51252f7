package io.tbmq.operator.desired;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.strimzi.api.kafka.model.kafka.JbodStorageBuilder;
import io.strimzi.api.kafka.model.kafka.KRaftMetadataStorage;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.KafkaBuilder;
import io.strimzi.api.kafka.model.kafka.PersistentClaimStorageBuilder;
import io.strimzi.api.kafka.model.kafka.listener.GenericKafkaListenerBuilder;
import io.strimzi.api.kafka.model.kafka.listener.KafkaListenerType;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePoolBuilder;
import io.strimzi.api.kafka.model.nodepool.ProcessRoles;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.topic.KafkaTopicBuilder;
import io.tbmq.operator.api.KafkaSpec;
import io.tbmq.operator.api.StorageSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.sizing.Plan;

/**
 * The Strimzi resources of a managed Kafka: one KRaft node pool whose nodes are both controllers
 * and brokers (Table 4's 3 to 5 Kafka nodes), the Kafka with a plain internal listener and the
 * topic operator, and one KafkaTopic per broker topic.
 */
public final class KafkaModel {
    public static final String STRIMZI_CLUSTER_LABEL = "strimzi.io/cluster";
    public static final String MSG_ALL = "msg-all";
    public static final String MSG_PERSISTED = "msg-persisted";
    public static final String CLIENT_SESSION = "client-session";
    public static final String RETAINED = "retained";
    public static final String CLUSTER_NODES = "cluster-nodes";

    private KafkaModel() {
    }

    public static Kafka kafka(TbmqCluster owner, Plan plan, Names names) {
        KafkaSpec spec = owner.getSpec().getKafka();
        int rf = plan.replicationFactor().value();
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("default.replication.factor", rf);
        config.put("min.insync.replicas", minInSync(rf));
        config.put("offsets.topic.replication.factor", rf);
        config.put("transaction.state.log.replication.factor", rf);
        config.put("transaction.state.log.min.isr", minInSync(rf));
        config.put("auto.create.topics.enable", false);
        return new KafkaBuilder()
                .withMetadata(Owners.meta(owner, names.kafka(), "kafka").build())
                .withNewSpec()
                    .withNewKafka()
                        .withVersion(blankToNull(spec.getVersion()))
                        .withListeners(new GenericKafkaListenerBuilder()
                                .withName("plain").withPort(9092).withType(KafkaListenerType.INTERNAL).withTls(false).build())
                        .withConfig(config)
                    .endKafka()
                    .withNewEntityOperator()
                        .withNewTopicOperator().endTopicOperator()
                    .endEntityOperator()
                .endSpec()
                .build();
    }

    public static KafkaNodePool nodePool(TbmqCluster owner, Plan plan, Names names) {
        KafkaSpec spec = owner.getSpec().getKafka();
        StorageSpec storage = spec.getStorage() == null ? new StorageSpec("20Gi") : spec.getStorage();
        var meta = Owners.meta(owner, names.kafka() + "-" + names.kafkaNodePool(), "kafka")
                .addToLabels(STRIMZI_CLUSTER_LABEL, names.kafka()).build();
        return new KafkaNodePoolBuilder()
                .withMetadata(meta)
                .withNewSpec()
                    .withReplicas(plan.kafkaBrokers().value())
                    .withRoles(ProcessRoles.CONTROLLER, ProcessRoles.BROKER)
                    .withStorage(new JbodStorageBuilder().withVolumes(new PersistentClaimStorageBuilder()
                            .withId(0)
                            .withSize(storage.getSize())
                            .withStorageClass(blankToNull(storage.getStorageClass()))
                            .withDeleteClaim(storage.isDeleteClaim())
                            .withKraftMetadata(KRaftMetadataStorage.SHARED)
                            .build()).build())
                    .withResources(resources(spec.getResources(), owner.getSpec().getTargetThroughput()))
                .endSpec()
                .build();
    }

    /**
     * The broker's topics. {@code partitions} is the value to apply, already raised to what the
     * topics have (partitions never shrink).
     */
    public static List<KafkaTopic> topics(TbmqCluster owner, Plan plan, Names names, int partitions) {
        int rf = plan.replicationFactor().value();
        return List.of(
                topic(owner, names, MSG_ALL, "tbmq.msg.all", partitions, rf, Map.of()),
                topic(owner, names, MSG_PERSISTED, "tbmq.msg.persisted", partitions, rf, Map.of()),
                // Cluster state is compacted: the latest record per key (client id, MQTT topic, node) is all that matters.
                topic(owner, names, CLIENT_SESSION, "tbmq.client.session", 1, rf, Map.of("cleanup.policy", "compact")),
                topic(owner, names, RETAINED, "tbmq.retained.msg", 1, rf, Map.of("cleanup.policy", "compact")),
                topic(owner, names, CLUSTER_NODES, "tbmq.cluster.nodes", 1, rf, Map.of("cleanup.policy", "compact")));
    }

    /**
     * Topics whose partitions follow the plan (the state topics keep one). Each broker creates its
     * own downlink topics, tbmq.msg.downlink.{basic,persisted}.&lt;pod&gt;, with the same replication.
     */
    public static boolean scalesWithPlan(String suffix) {
        return MSG_ALL.equals(suffix) || MSG_PERSISTED.equals(suffix);
    }

    private static KafkaTopic topic(TbmqCluster owner, Names names, String suffix, String topicName, int partitions, int rf,
            Map<String, Object> config) {
        var meta = Owners.meta(owner, names.kafkaTopic(suffix), "kafka")
                .addToLabels(STRIMZI_CLUSTER_LABEL, names.kafka()).build();
        return new KafkaTopicBuilder()
                .withMetadata(meta)
                .withNewSpec()
                    .withTopicName(topicName)
                    .withPartitions(partitions)
                    .withReplicas(rf)
                    .withConfig(new LinkedHashMap<>(config))
                .endSpec()
                .build();
    }

    static int minInSync(int rf) {
        return Math.max(1, Math.min(2, rf - 1));
    }

    /** Table 3's Kafka nodes are 2 vCPU / 4 GiB from 200k msg/s; below that half of it. */
    static ResourceRequirements resources(ResourceRequirements requested, long target) {
        return requested != null ? requested : Resources.requests(target >= 200_000 ? "2" : "1", target >= 200_000 ? "4Gi" : "2Gi");
    }

    static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
