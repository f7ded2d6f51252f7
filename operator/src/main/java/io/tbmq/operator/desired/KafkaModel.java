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
import io.strimzi.api.kafka.model.kafka.cruisecontrol.KafkaAutoRebalanceConfigurationBuilder;
import io.strimzi.api.kafka.model.kafka.cruisecontrol.KafkaAutoRebalanceMode;
import io.strimzi.api.kafka.model.rebalance.KafkaRebalance;
import io.strimzi.api.kafka.model.rebalance.KafkaRebalanceBuilder;
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
 * The Strimzi resources of a managed Kafka: a fixed pool of three KRaft controllers (Strimzi's
 * controller quorum is static: a pool with the controller role cannot be scaled), a pool of
 * brokers whose size follows the plan (the TBMQ paper's Table 4: 3 to 5 Kafka brokers), the Kafka
 * with a plain internal listener, the topic operator and Cruise Control rebalancing partitions
 * onto added brokers and off brokers to be removed, the rebalance template it uses, and one
 * KafkaTopic per broker topic.
 */
public final class KafkaModel {
    public static final String STRIMZI_CLUSTER_LABEL = "strimzi.io/cluster";
    public static final String MSG_ALL = "msg-all";
    public static final String MSG_PERSISTED = "msg-persisted";
    public static final String CLIENT_SESSION = "client-session";
    public static final String RETAINED = "retained";
    public static final String CLUSTER_NODES = "cluster-nodes";
    /** Controllers in the fixed pool: a quorum that survives one loss. */
    public static final int CONTROLLERS = 3;
    static final String CONTROLLER_STORAGE = "5Gi";
    public static final String REBALANCE_TEMPLATE_ANNOTATION = "strimzi.io/rebalance-template";

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
                    // Brokers added by a scale edit get partitions, and brokers to be removed are emptied
                    // first (Strimzi refuses to remove brokers that still hold partitions).
                    .withNewCruiseControl()
                        .withAutoRebalance(
                                new KafkaAutoRebalanceConfigurationBuilder().withMode(KafkaAutoRebalanceMode.ADD_BROKERS)
                                        .withNewTemplate(names.kafkaRebalanceTemplate()).build(),
                                new KafkaAutoRebalanceConfigurationBuilder().withMode(KafkaAutoRebalanceMode.REMOVE_BROKERS)
                                        .withNewTemplate(names.kafkaRebalanceTemplate()).build())
                    .endCruiseControl()
                .endSpec()
                .build();
    }

    /** The KafkaRebalance Strimzi copies for each automatic rebalance (a template: it never runs itself). */
    public static KafkaRebalance rebalanceTemplate(TbmqCluster owner, Names names) {
        var meta = Owners.meta(owner, names.kafkaRebalanceTemplate(), "kafka")
                .addToLabels(STRIMZI_CLUSTER_LABEL, names.kafka())
                .addToAnnotations(REBALANCE_TEMPLATE_ANNOTATION, "true").build();
        return new KafkaRebalanceBuilder().withMetadata(meta).withNewSpec().endSpec().build();
    }

    /** The controllers: three, always (the quorum's voters are fixed when the cluster is formed). */
    public static KafkaNodePool controllerPool(TbmqCluster owner, Names names) {
        StorageSpec storage = storage(owner);
        return pool(owner, names, names.kafkaControllerPool(), CONTROLLERS, ProcessRoles.CONTROLLER,
                new StorageSpec(CONTROLLER_STORAGE, storage.getStorageClass(), storage.isDeleteClaim()), Resources.requests("250m", "1Gi"));
    }

    /** The brokers: as many as the plan says. */
    public static KafkaNodePool brokerPool(TbmqCluster owner, Plan plan, Names names) {
        return pool(owner, names, names.kafkaBrokerPool(), plan.kafkaBrokers().value(), ProcessRoles.BROKER, storage(owner),
                resources(owner.getSpec().getKafka().getResources(), owner.getSpec().getTargetThroughput()));
    }

    private static StorageSpec storage(TbmqCluster owner) {
        StorageSpec storage = owner.getSpec().getKafka().getStorage();
        return (storage == null ? new StorageSpec() : storage).withDefaultSize(KafkaSpec.DEFAULT_STORAGE_SIZE);
    }

    private static KafkaNodePool pool(TbmqCluster owner, Names names, String name, int replicas, ProcessRoles role, StorageSpec storage,
            ResourceRequirements resources) {
        var meta = Owners.meta(owner, name, "kafka").addToLabels(STRIMZI_CLUSTER_LABEL, names.kafka()).build();
        return new KafkaNodePoolBuilder()
                .withMetadata(meta)
                .withNewSpec()
                    .withReplicas(replicas)
                    .withRoles(role)
                    .withStorage(new JbodStorageBuilder().withVolumes(new PersistentClaimStorageBuilder()
                            .withId(0)
                            .withSize(storage.getSize())
                            .withStorageClass(blankToNull(storage.getStorageClass()))
                            .withDeleteClaim(storage.isDeleteClaim())
                            .withKraftMetadata(KRaftMetadataStorage.SHARED)
                            .build()).build())
                    .withResources(resources)
                .endSpec()
                .build();
    }

    /**
     * The broker's topics. {@code partitions} are the values to apply, already raised to what the
     * topics have (partitions never shrink).
     */
    public static List<KafkaTopic> topics(TbmqCluster owner, Plan plan, Names names, TopicPartitions partitions) {
        int rf = plan.replicationFactor().value();
        return List.of(
                topic(owner, names, MSG_ALL, "tbmq.msg.all", partitions.messages(), rf, Map.of()),
                topic(owner, names, MSG_PERSISTED, "tbmq.msg.persisted", partitions.persisted(), rf, Map.of()),
                // Cluster state is compacted: the latest record per key (client id, MQTT topic, node) is all that matters.
                topic(owner, names, CLIENT_SESSION, "tbmq.client.session", 1, rf, Map.of("cleanup.policy", "compact")),
                topic(owner, names, RETAINED, "tbmq.retained.msg", 1, rf, Map.of("cleanup.policy", "compact")),
                topic(owner, names, CLUSTER_NODES, "tbmq.cluster.nodes", 1, rf, Map.of("cleanup.policy", "compact")));
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

    public static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
