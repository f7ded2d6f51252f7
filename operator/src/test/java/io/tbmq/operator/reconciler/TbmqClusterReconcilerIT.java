package io.tbmq.operator.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.Samples;
import io.tbmq.operator.redis.RedisEndpoints;

/**
 * The reconciler against fabric8's mock API server (CRUD mode): what it writes, what it refuses,
 * and the status a user reads. No Redis here: the managed-Redis path is covered by
 * RedisWhileItsPodsAreRefusedIT (refused Redis pods, with real redis-servers) and the e2e suite.
 */
@EnableKubernetesMockClient(crud = true)
class TbmqClusterReconcilerIT {
    static final RedisEndpoints NO_REDIS = (pod, ordinal) -> {
        throw new AssertionError("no Redis in this test");
    };
    static final String NS = "iot";

    KubernetesClient client;
    TbmqClusterReconciler reconciler;

    @BeforeEach
    void setUp() {
        reconciler = new TbmqClusterReconciler(NO_REDIS, TbmqClusterReconciler.Settings.defaults(false));
        reconciler.reachability = spec -> java.util.List.of(); // the samples' external hosts do not exist here
        // The Secrets the samples name.
        secret("dev-users", "credentials.yaml");
        secret("fleet-users", "credentials.yaml");
        secret("kafka-client", "client.properties");
        secret("redis-auth", "password");
    }

    private void secret(String name, String key) {
        client.resource(new SecretBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .addToData(key, "eA==").build()).create();
    }

    private TbmqCluster create(String sample) {
        TbmqCluster c = Samples.load(sample, NS);
        c.getMetadata().setUid(null);
        c.getMetadata().setGeneration(null);
        TbmqCluster created = client.resource(c).inNamespace(NS).create();
        created.getMetadata().setGeneration(1L);
        return created;
    }

    private static Condition condition(TbmqCluster c, String type) {
        return Conditions.find(c.getStatus().getConditions(), type);
    }

    @Test
    void aManagedClusterGetsEveryObjectAndWaitsForStrimzi() {
        TbmqCluster c = create("tbmq-p2p-200k.yaml");
        reconciler.reconcile(c, client);

        assertThat(client.resources(Kafka.class).inNamespace(NS).withName("p2p-200k-kafka").get()).isNotNull();
        assertThat(client.resources(KafkaNodePool.class).inNamespace(NS).withName("p2p-200k-kafka-brokers").get().getSpec()
                .getReplicas()).isEqualTo(3);
        assertThat(client.resources(KafkaNodePool.class).inNamespace(NS).withName("p2p-200k-kafka-controllers").get().getSpec()
                .getReplicas()).as("a fixed KRaft quorum").isEqualTo(3);
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).list().getItems()).hasSize(5);
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-redis").get().getSpec().getReplicas()).isEqualTo(3);
        StatefulSet brokers = client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-broker").get();
        assertThat(brokers.getSpec().getReplicas()).isEqualTo(1);
        assertThat(brokers.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(c.getMetadata().getUid()));
        assertThat(client.configMaps().inNamespace(NS).withName("p2p-200k-broker-live").get().getData().get("live.properties"))
                .contains("tbmq.redis.lettuce-batch-size=150");
        assertThat(client.services().inNamespace(NS).withName("p2p-200k-broker").get()).isNotNull();
        assertThat(client.policy().v1().podDisruptionBudget().inNamespace(NS).withName("p2p-200k-broker").get()).isNotNull();

        assertThat(c.getStatus().getObservedGeneration()).isEqualTo(1);
        assertThat(c.getStatus().getPlan().getBrokers().getValue()).isEqualTo("1");
        assertThat(c.getStatus().getPlan().getLettuceBatchSize().getRule()).contains("Table 5");
        assertThat(condition(c, Conditions.READY).getStatus()).isEqualTo("False");
        assertThat(condition(c, Conditions.PROGRESSING).getStatus()).isEqualTo("True");
        assertThat(condition(c, Conditions.DEGRADED).getStatus()).isEqualTo("False");
        assertThat(condition(c, "KafkaReady").getReason()).isEqualTo("WaitingForStrimzi");
        assertThat(c.getStatus().getKafka()).isEqualTo("0/3");
        assertThat(c.getStatus().getEndpoints()).extracting(e -> e.getAddress()).contains("p2p-200k-broker.iot.svc:1883");

        // No Secret named: Redis still asks for a password, one the operator generated, and the brokers start with it.
        var copy = client.secrets().inNamespace(NS).withName("p2p-200k-redis-password").get();
        assertThat(copy.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(c.getMetadata().getUid()));
        String generated = copy.getData().get("password");
        assertThat(java.util.Base64.getDecoder().decode(generated)).hasSizeGreaterThanOrEqualTo(16);
        assertThat(brokers.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsEntry("tbmq.io/redis-password-version", "1");
        assertThat(copy.getMetadata().getAnnotations()).containsEntry("tbmq.io/password-generation", "1");
        reconciler.reconcile(c, client);
        assertThat(client.secrets().inNamespace(NS).withName("p2p-200k-redis-password").get().getData().get("password"))
                .as("generated once").isEqualTo(generated);
    }

    @Test
    void anInvalidEditIsDegradedNamingTheFieldAndChangesNothing() {
        TbmqCluster c = create("tbmq-p2p-200k.yaml");
        reconciler.reconcile(c, client);
        String brokersVersion = client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-broker").get().getMetadata()
                .getResourceVersion();

        c.getMetadata().setGeneration(2L);
        c.getSpec().setTargetThroughput(600_000);
        c.getSpec().getBroker().getPersistence().setDeviceMessagesLimit(100_000);
        reconciler.reconcile(c, client);
        Condition degraded = condition(c, Conditions.DEGRADED);
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getReason()).isEqualTo("InvalidSpec");
        assertThat(degraded.getMessage()).contains("spec.broker.persistence.deviceMessagesLimit");
        assertThat(degraded.getObservedGeneration()).isEqualTo(2);
        // Not Ready for this spec, though what runs keeps running: `kubectl wait --for=condition=Ready` must not pass the edit.
        assertThat(condition(c, Conditions.READY)).satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo("False");
            assertThat(r.getReason()).isEqualTo("InvalidSpec");
            assertThat(r.getMessage()).contains("spec.broker.persistence.deviceMessagesLimit");
        });
        assertThat(c.getStatus().getPlan().getBrokers().getValue()).as("the last good plan stays").isEqualTo("1");
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-broker").get().getMetadata().getResourceVersion())
                .as("nothing running is touched").isEqualTo(brokersVersion);

        c.getMetadata().setGeneration(3L);
        c.getSpec().getBroker().getPersistence().setDeviceMessagesLimit(10_000);
        reconciler.reconcile(c, client);
        assertThat(condition(c, Conditions.DEGRADED).getStatus()).isEqualTo("False");
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-broker").get().getSpec().getReplicas())
                .isEqualTo(3);
    }

    @Test
    void aBrokerSettingTheBrokersCannotReadIsRefusedBeforeAnyBrokerRollsAndOneTheyDoNotHaveIsReported() {
        TbmqCluster c = create("tbmq-p2p-200k.yaml");
        reconciler.reconcile(c, client);
        String brokersVersion = client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-broker").get().getMetadata()
                .getResourceVersion();

        c.getMetadata().setGeneration(2L);
        c.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-packet-size", "lots");
        c.getSpec().getBroker().getConfig().put("tbmq.mqt.max-keep-alive", "60");
        c.getSpec().getBroker().getConfig().put("tbmq.node-id", "");
        // The managed Redis's password comes from the operator's Secret.
        c.getSpec().getBroker().getConfig().put("tbmq.redis.password", "in plain sight");
        reconciler.reconcile(c, client);
        Condition degraded = condition(c, Conditions.DEGRADED);
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getReason()).isEqualTo("InvalidSpec");
        assertThat(degraded.getMessage()).isEqualTo("spec.broker.config[tbmq.mqtt.max-packet-size]: must be a whole number, not 'lots'");
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("p2p-200k-broker").get().getMetadata().getResourceVersion())
                .as("no broker pod rolls into a crash loop").isEqualTo(brokersVersion);

        c.getMetadata().setGeneration(3L);
        c.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-packet-size", "65536");
        reconciler.reconcile(c, client);
        assertThat(condition(c, Conditions.DEGRADED).getStatus()).isEqualTo("False");
        assertThat(client.configMaps().inNamespace(NS).withName("p2p-200k-broker-config").get().getData())
                .containsEntry("TBMQ_MQTT_MAX_PACKET_SIZE", "65536");
        Condition unknown = condition(c, TbmqClusterReconciler.UNKNOWN_SETTINGS);
        assertThat(unknown.getStatus()).isEqualTo("True");
        assertThat(unknown.getMessage()).isEqualTo("spec.broker.config: tbmq.mqt.max-keep-alive is not a setting of this operator's"
                + " broker version (docs/configuration.md lists them); tbmq.node-id is set by each broker's pod itself (from its name,"
                + " UID and TbmqCluster); tbmq.redis.password is set by each broker's pod from the Redis password Secret (the"
                + " operator's for a managed Redis, spec.redis.passwordSecret for an external one); the brokers ignore them");

        c.getMetadata().setGeneration(4L);
        c.getSpec().getBroker().getConfig().remove("tbmq.mqt.max-keep-alive");
        c.getSpec().getBroker().getConfig().remove("tbmq.node-id");
        c.getSpec().getBroker().getConfig().remove("tbmq.redis.password");
        reconciler.reconcile(c, client);
        assertThat(c.getStatus().getConditions()).noneMatch(x -> x.getType().equals(TbmqClusterReconciler.UNKNOWN_SETTINGS));
    }

    @Test
    void aMissingSecretIsDegradedNamingTheFieldAndNothingIsCreated() {
        TbmqCluster c = create("tbmq-tls.yaml");
        reconciler.reconcile(c, client);
        Condition degraded = condition(c, Conditions.DEGRADED);
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getMessage()).contains("spec.broker.tlsSecret: Secret 'mqtt-tls' not found");
        assertThat(client.apps().statefulSets().inNamespace(NS).list().getItems()).isEmpty();

        client.resource(new SecretBuilder().withNewMetadata().withName("mqtt-tls").withNamespace(NS).endMetadata()
                .addToData("tls.crt", "eA==").addToData("tls.key", "eA==").build()).create();
        reconciler.reconcile(c, client);
        assertThat(condition(c, Conditions.DEGRADED).getStatus()).isEqualTo("False");
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("secure-broker").get()).isNotNull();
    }

    @Test
    void externalKafkaAndRedisNeedOnlyBrokersAndTurnReadyWithThem() {
        TbmqCluster c = create("tbmq-external.yaml");
        reconciler.reconcile(c, client);
        assertThat(client.resources(Kafka.class).inNamespace(NS).list().getItems()).isEmpty();
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-redis").get()).isNull();
        assertThat(condition(c, "KafkaReady").getReason()).isEqualTo("External");
        assertThat(condition(c, Conditions.READY).getStatus()).isEqualTo("False");
        assertThat(c.getStatus().getBrokers()).isEqualTo("0/1");

        StatefulSet sts = client.apps().statefulSets().inNamespace(NS).withName("external-broker").get();
        // Plays the StatefulSet controller; the mock server bumps the generation on the operator's next patch.
        sts.setStatus(new StatefulSetStatusBuilder().withObservedGeneration(sts.getMetadata().getGeneration() + 1).withReplicas(1)
                .withReadyReplicas(1).withUpdatedReplicas(1).withCurrentRevision("r1").withUpdateRevision("r1").build());
        client.resource(sts).updateStatus();
        reconciler.reconcile(c, client);
        assertThat(condition(c, Conditions.READY).getStatus()).as(condition(c, Conditions.READY).getMessage()).isEqualTo("True");
        assertThat(condition(c, Conditions.PROGRESSING).getStatus()).isEqualTo("False");
        assertThat(c.getStatus().getBrokers()).isEqualTo("1/1");
        assertThat(c.getStatus().getKafka()).isEqualTo("external");
    }

    @Test
    void fewerPartitionsAreRefusedAndTheTopicsKeepTheirs() {
        TbmqCluster c = create("tbmq-p2p-1m.yaml");
        reconciler.reconcile(c, client);
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).withName("p2p-1m-msg-all").get().getSpec().getPartitions())
                .isEqualTo(20);

        c.getMetadata().setGeneration(2L);
        c.getSpec().getOverrides().setPartitions(8);
        reconciler.reconcile(c, client);
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).withName("p2p-1m-msg-all").get().getSpec().getPartitions())
                .isEqualTo(20);
        Condition kept = condition(c, TbmqClusterReconciler.PARTITIONS_KEPT);
        assertThat(kept.getStatus()).isEqualTo("True");
        assertThat(kept.getMessage()).contains("8 partitions", "stay at 20");
        assertThat(client.configMaps().inNamespace(NS).withName("p2p-1m-broker-live").get().getData().get("live.properties"))
                .contains("tbmq.kafka.msg-all-partitions=20");
        assertThat(client.v1().events().inNamespace(NS).list().getItems())
                .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("PartitionDecreaseRefused"));

        c.getMetadata().setGeneration(3L);
        c.getSpec().getOverrides().setPartitions(24);
        reconciler.reconcile(c, client);
        assertThat(condition(c, TbmqClusterReconciler.PARTITIONS_KEPT)).isNull();
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).withName("p2p-1m-msg-all").get().getSpec().getPartitions())
                .isEqualTo(24);
    }

    @Test
    void tbmqMsgPersistedIsOnlyDrainedSoItKeepsWhatItHasAndANewClusterGetsOne() {
        TbmqCluster c = create("tbmq-p2p-1m.yaml");
        reconciler.reconcile(c, client);
        assertThat(partitions("p2p-1m-msg-all")).isEqualTo(20);
        assertThat(partitions("p2p-1m-msg-persisted")).isEqualTo(1);
        assertThat(liveSettings("p2p-1m")).contains("tbmq.kafka.msg-all-partitions=20", "tbmq.persistence.persisted-partitions=1");

        // A cluster an earlier operator made: its tbmq.msg.persisted grew with the plan. It keeps what it
        // has (Kafka cannot remove partitions), and a scale edit no longer grows it.
        KafkaTopic persisted = client.resources(KafkaTopic.class).inNamespace(NS).withName("p2p-1m-msg-persisted").get();
        persisted.getSpec().setPartitions(20);
        client.resource(persisted).update();
        c.getMetadata().setGeneration(2L);
        c.getSpec().getOverrides().setPartitions(24);
        reconciler.reconcile(c, client);
        assertThat(partitions("p2p-1m-msg-all")).isEqualTo(24);
        assertThat(partitions("p2p-1m-msg-persisted")).isEqualTo(20);
        assertThat(liveSettings("p2p-1m")).contains("tbmq.kafka.msg-all-partitions=24", "tbmq.persistence.persisted-partitions=20");
        assertThat(condition(c, TbmqClusterReconciler.PARTITIONS_KEPT)).isNull();
        assertThat(client.v1().events().inNamespace(NS).list().getItems()).filteredOn(e -> "PartitionsRaised".equals(e.getReason()))
                .singleElement().satisfies(e -> assertThat(e.getMessage()).contains("tbmq.msg.all partitions 20 -> 24"));

        // Brokers of an earlier build kept on purpose: one setting raises the topic, and the KafkaTopic and brokers agree.
        c.getMetadata().setGeneration(3L);
        c.getSpec().getBroker().getConfig().put("tbmq.persistence.persisted-partitions", "32");
        reconciler.reconcile(c, client);
        assertThat(partitions("p2p-1m-msg-persisted")).isEqualTo(32);
        assertThat(liveSettings("p2p-1m")).contains("tbmq.persistence.persisted-partitions=32");
    }

    @Test
    void aFailedConnectionToTheApiServerIsReportedAsDegradedAndNotReady() {
        TbmqCluster c = create("tbmq-dev.yaml");
        reconciler.reconcile(c, client);
        reconciler.updateErrorStatus(c, null, new io.fabric8.kubernetes.client.KubernetesClientException("connect timed out",
                new java.net.SocketTimeoutException()));
        Condition degraded = condition(c, Conditions.DEGRADED);
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getMessage()).isEqualTo("Kubernetes API: connect timed out");
        // The spec is not applied: a Ready left from before would let `kubectl wait --for=condition=Ready` pass an edit that failed.
        assertThat(condition(c, Conditions.READY)).satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo("False");
            assertThat(r.getReason()).isEqualTo("ReconcileError");
            assertThat(r.getMessage()).isEqualTo("Kubernetes API: connect timed out");
        });
        assertThat(condition(c, Conditions.PROGRESSING).getStatus()).isEqualTo("True");
    }

    @Test
    void aReconcileThatFailsHalfWayLeavesTheStatusAsItWas() {
        TbmqCluster c = create("tbmq-p2p-200k.yaml");
        reconciler.reconcile(c, client);
        int brokers = c.getStatus().getDesiredBrokers();
        String partitions = c.getStatus().getPlan().getPartitions().getValue();

        c.getMetadata().setGeneration(2L);
        c.getSpec().setTargetThroughput(800_000);
        IllegalStateException failure = new IllegalStateException("lookup of the Kafka bootstrap address failed");
        reconciler.reachability = spec -> {
            throw failure;
        };
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> reconciler.reconcile(c, client)).isSameAs(failure);
        reconciler.updateErrorStatus(c, null, failure);
        // The error status is written from this object: it must not claim the scale step that was not finished.
        assertThat(c.getStatus().getDesiredBrokers()).isEqualTo(brokers);
        assertThat(c.getStatus().getPlan().getPartitions().getValue()).isEqualTo(partitions);
        assertThat(condition(c, Conditions.DEGRADED).getMessage()).contains("lookup of the Kafka bootstrap address failed");

        reconciler.reachability = spec -> java.util.List.of();
        reconciler.reconcile(c, client);
        assertThat(c.getStatus().getDesiredBrokers()).isGreaterThan(brokers);
        assertThat(Integer.parseInt(c.getStatus().getPlan().getPartitions().getValue())).isGreaterThan(Integer.parseInt(partitions));
    }

    private int partitions(String kafkaTopic) {
        return client.resources(KafkaTopic.class).inNamespace(NS).withName(kafkaTopic).get().getSpec().getPartitions();
    }

    private String liveSettings(String cluster) {
        return client.configMaps().inNamespace(NS).withName(cluster + "-broker-live").get().getData().get("live.properties");
    }

    @Test
    void anUnreachableExternalKafkaIsDegradedNamingTheField() {
        reconciler.reachability = io.tbmq.operator.validation.Reachability::check;
        TbmqCluster c = create("tbmq-external.yaml");
        reconciler.reconcile(c, client);
        Condition degraded = condition(c, Conditions.DEGRADED);
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getReason()).isEqualTo("Unreachable");
        assertThat(degraded.getMessage()).contains("spec.kafka.bootstrapServers", "spec.redis.nodes");
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-broker").get())
                .as("the brokers are still applied: they retry until the addresses answer").isNotNull();
    }

    @Test
    void aSteadyConditionKeepsItsTransitionTime() {
        TbmqCluster c = create("tbmq-dev.yaml");
        reconciler.reconcile(c, client);
        condition(c, Conditions.DEGRADED).setLastTransitionTime("2020-01-01T00:00:00Z");
        reconciler.reconcile(c, client);
        assertThat(condition(c, Conditions.DEGRADED).getLastTransitionTime()).isEqualTo("2020-01-01T00:00:00Z");
    }

    @Test
    void everyScaleEventIsRecordedBeforeTheWriteItAnnounces() {
        // An operator stopped between a write and its Event would otherwise lose the Event for good: the
        // next one finds nothing left to change. Written first, the Event is at worst recorded twice.
        // (The mock server numbers resource versions across all objects, in the order they are written.)
        TbmqCluster c = create("tbmq-p2p-1m.yaml");
        reconciler.reconcile(c, client);
        c.getMetadata().setGeneration(2L);
        c.getSpec().getOverrides().setPartitions(24);
        reconciler.reconcile(c, client);

        long topic = version(client.resources(KafkaTopic.class).inNamespace(NS).withName("p2p-1m-msg-all").get());
        long live = version(client.configMaps().inNamespace(NS).withName("p2p-1m-broker-live").get());
        assertThat(version(event("PartitionsRaised"))).isLessThan(topic);
        assertThat(version(event("BrokerSettingsApplied"))).isLessThan(live);
    }

    /** Refuses the pods of the StatefulSets whose names end so, as a LimitRange would. */
    private static io.tbmq.operator.provision.Applier.PodCheck refusing(String suffix) {
        return (sts, addsPods) -> {
            if (sts.getMetadata().getName().endsWith(suffix)) {
                throw new io.tbmq.operator.provision.Applier.PodsRefused(sts.getMetadata().getName(),
                        "memory max limit to request ratio per Container is 1500m, but provided ratio is 2.000000");
            }
            return java.util.Optional.empty();
        };
    }

    private TbmqCluster externalKafkaWithManagedRedis() {
        TbmqCluster c = Samples.load("tbmq-external.yaml", NS);
        c.getMetadata().setUid(null);
        c.getMetadata().setGeneration(null);
        c.getSpec().getRedis().setMode(io.tbmq.operator.api.Mode.MANAGED);
        c.getSpec().getRedis().setNodes(null);
        c.getSpec().getRedis().setPasswordSecret(null);
        TbmqCluster created = client.resource(c).inNamespace(NS).create();
        created.getMetadata().setGeneration(1L);
        return created;
    }

    private static long delaySeconds(io.javaoperatorsdk.operator.api.reconciler.UpdateControl<TbmqCluster> control) {
        return control.getScheduleDelay().orElseThrow() / 1000;
    }

    @Test
    void aNewClusterWhoseRedisPodsAreRefusedHasItsBrokersWaitOnThatAndIsLookedAtAgainLessOften() {
        reconciler.podCheck = refusing("-redis");
        TbmqCluster c = externalKafkaWithManagedRedis();
        var control = reconciler.reconcile(c, client);

        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-redis").get()).isNull();
        assertThat(client.services().inNamespace(NS).withName("external-redis").get()).as("nothing of Redis is written").isNull();
        assertThat(condition(c, "RedisReady")).satisfies(r -> {
            assertThat(r.getReason()).isEqualTo("PodsRefused");
            assertThat(r.getMessage()).contains("StatefulSet external-redis", "max limit to request ratio");
        });
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-broker").get())
                .as("the brokers get their spec, and are ready as soon as Redis is").isNotNull();
        assertThat(condition(c, "BrokersReady")).satisfies(b -> {
            assertThat(b.getStatus()).isEqualTo("False");
            assertThat(b.getReason()).isEqualTo(TbmqClusterReconciler.WAITING_FOR_REDIS);
        });
        assertThat(condition(c, Conditions.DEGRADED)).satisfies(d -> {
            assertThat(d.getReason()).isEqualTo("PodsRefused");
            assertThat(d.getMessage()).contains("external-redis").doesNotContain("external-broker");
        });
        assertThat(condition(c, Conditions.PROGRESSING)).satisfies(p -> {
            assertThat(p.getStatus()).as("nothing moves before an edit or a policy change").isEqualTo("False");
            assertThat(p.getReason()).isEqualTo("PodsRefused");
        });
        assertThat(delaySeconds(control)).isEqualTo(TbmqClusterReconciler.WHILE_REFUSED.toSeconds());

        // The policy relaxed: Redis is written, and the brokers wait on their own pods again.
        reconciler.podCheck = (sts, addsPods) -> java.util.Optional.empty();
        control = reconciler.reconcile(c, client);
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-redis").get()).isNotNull();
        assertThat(condition(c, "RedisReady").getReason()).isNotEqualTo("PodsRefused");
        assertThat(condition(c, "BrokersReady").getReason()).isNotEqualTo(TbmqClusterReconciler.WAITING_FOR_REDIS);
        assertThat(condition(c, Conditions.PROGRESSING).getStatus()).isEqualTo("True");
        assertThat(condition(c, Conditions.DEGRADED).getStatus()).isEqualTo("False");
        assertThat(delaySeconds(control)).isLessThan(TbmqClusterReconciler.WHILE_REFUSED.toSeconds());
    }

    @Test
    void brokersOfARedisWhosePodsServeWaitOnTheirOwnWhenARedisScaleUpIsRefused() {
        reconciler.podCheck = (sts, addsPods) -> java.util.Optional.empty();
        TbmqCluster c = externalKafkaWithManagedRedis();
        reconciler.reconcile(c, client);
        StatefulSet redis = client.apps().statefulSets().inNamespace(NS).withName("external-redis").get();
        // Its pods run and are ready; the StatefulSet's status says nothing yet (no controller here).
        for (int i = 0; i < redis.getSpec().getReplicas(); i++) {
            client.resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName("external-redis-" + i)
                    .withNamespace(NS).withLabels(redis.getSpec().getTemplate().getMetadata().getLabels()).endMetadata()
                    .withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus("True").endCondition()
                    .endStatus().build()).create();
        }

        reconciler.podCheck = refusing("-redis");
        c.getMetadata().setGeneration(2L);
        if (c.getSpec().getOverrides() == null) {
            c.getSpec().setOverrides(new io.tbmq.operator.api.Overrides());
        }
        c.getSpec().getOverrides().setRedisMasters(redis.getSpec().getReplicas() + 1);
        reconciler.reconcile(c, client);
        assertThat(condition(c, "RedisReady").getReason()).isEqualTo("PodsRefused");
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-redis").get().getSpec().getReplicas())
                .isEqualTo(redis.getSpec().getReplicas());
        assertThat(condition(c, "BrokersReady").getReason()).as("Redis serves: the brokers' own reason")
                .isNotEqualTo(TbmqClusterReconciler.WAITING_FOR_REDIS);
        assertThat(condition(c, Conditions.PROGRESSING)).satisfies(p -> {
            assertThat(p.getStatus()).isEqualTo("True");
            assertThat(p.getReason()).isEqualTo(condition(c, "BrokersReady").getReason());
        });
    }

    @Test
    void brokersRefusedOnAScaleEditKeepTheirStepTheirSettingsAndTheirPartitions() {
        TbmqCluster c = create("tbmq-external.yaml");
        reconciler.podCheck = (sts, addsPods) -> java.util.Optional.empty();
        reconciler.reconcile(c, client);
        int brokers = c.getStatus().getDesiredBrokers();
        String partitions = c.getStatus().getPlan().getPartitions().getValue();
        String settings = client.configMaps().inNamespace(NS).withName("external-broker-config").get().getData().toString();

        reconciler.podCheck = refusing("-broker");
        c.getMetadata().setGeneration(2L);
        c.getSpec().setTargetThroughput(800_000);
        var control = reconciler.reconcile(c, client);

        assertThat(c.getStatus().getPlan().getBrokers().getValue()).as("the plan").isNotEqualTo(Integer.toString(brokers));
        assertThat(c.getStatus().getDesiredBrokers()).as("the step not written").isEqualTo(brokers);
        assertThat(c.getStatus().getBrokers()).isEqualTo("0/" + brokers);
        assertThat(c.getStatus().getPlan().getPartitions().getValue()).as("what the brokers were given").isEqualTo(partitions);
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-broker").get().getSpec().getReplicas())
                .isEqualTo(brokers);
        assertThat(client.configMaps().inNamespace(NS).withName("external-broker-config").get().getData().toString()).isEqualTo(settings);
        assertThat(client.v1().events().inNamespace(NS).list().getItems()).noneSatisfy(e -> assertThat(e.getReason())
                .isIn("ScalingBrokers", "RollingBrokers", "BrokerSettingsApplied"));
        assertThat(condition(c, "BrokersReady").getReason()).isEqualTo("PodsRefused");
        assertThat(condition(c, Conditions.DEGRADED).getMessage()).contains("StatefulSet external-broker");
        assertThat(condition(c, Conditions.PROGRESSING).getReason()).isEqualTo("PodsRefused");
        assertThat(condition(c, Conditions.READY).getStatus()).isEqualTo("False");
        assertThat(delaySeconds(control)).isEqualTo(TbmqClusterReconciler.WHILE_REFUSED.toSeconds());

        reconciler.podCheck = (sts, addsPods) -> java.util.Optional.empty();
        reconciler.reconcile(c, client);
        assertThat(c.getStatus().getDesiredBrokers()).isGreaterThan(brokers);
        assertThat(client.v1().events().inNamespace(NS).list().getItems())
                .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("ScalingBrokers"));
    }

    @Test
    void anExternalKafkasBrokersRefusedOnTheirFirstPassRecordNoPartitionsSoALowerCountLaterIsNoDecrease() {
        reconciler.podCheck = refusing("-broker");
        TbmqCluster c = create("tbmq-external.yaml");
        reconciler.reconcile(c, client);
        int planned = SizingModelPartitions.of(c);
        assertThat(c.getStatus().getPlan().getPartitions().getValue()).as("none given to the brokers").isNull();
        assertThat(c.getStatus().getDesiredBrokers()).as("nor any step").isZero();

        reconciler.podCheck = (sts, addsPods) -> java.util.Optional.empty();
        c.getMetadata().setGeneration(2L);
        if (c.getSpec().getOverrides() == null) {
            c.getSpec().setOverrides(new io.tbmq.operator.api.Overrides());
        }
        c.getSpec().getOverrides().setPartitions(planned - 1);
        reconciler.reconcile(c, client);
        assertThat(condition(c, TbmqClusterReconciler.PARTITIONS_KEPT)).isNull();
        assertThat(c.getStatus().getPlan().getPartitions().getValue()).isEqualTo(Integer.toString(planned - 1));
        assertThat(liveSettings("external")).contains("tbmq.kafka.msg-all-partitions=" + (planned - 1));
    }

    /** The partitions the plan gives a spec. */
    private static final class SizingModelPartitions {
        static int of(TbmqCluster c) {
            return io.tbmq.operator.sizing.SizingModel.plan(c.getSpec()).partitions().value();
        }
    }

    @Test
    void podsTheApiServerCannotCheckAreReportedUntilItCanAndAskedAboutEveryPassUntilThen() {
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<String> answer = new java.util.concurrent.atomic.AtomicReference<>(
                "HTTP 400: admission webhook \"pods.policy.example.com\" does not support dry run");
        reconciler.podCheck = (sts, addsPods) -> {
            asked.incrementAndGet();
            return java.util.Optional.ofNullable(answer.get());
        };
        TbmqCluster c = create("tbmq-external.yaml");
        reconciler.reconcile(c, client);
        assertThat(condition(c, TbmqClusterReconciler.PODS_UNCHECKED)).satisfies(u -> {
            assertThat(u.getStatus()).isEqualTo("True");
            assertThat(u.getMessage()).contains("StatefulSet external-broker", "does not support dry run");
        });
        assertThat(client.apps().statefulSets().inNamespace(NS).withName("external-broker").get()).as("written all the same")
                .isNotNull();
        int first = asked.get();
        reconciler.reconcile(c, client);
        assertThat(asked.get()).as("asked again").isGreaterThan(first);
        assertThat(condition(c, TbmqClusterReconciler.PODS_UNCHECKED)).isNotNull();

        answer.set(null);
        reconciler.reconcile(c, client);
        assertThat(condition(c, TbmqClusterReconciler.PODS_UNCHECKED)).isNull();
        int answered = asked.get();
        reconciler.reconcile(c, client);
        assertThat(asked.get()).as("checked once: the template is unchanged since").isEqualTo(answered);
    }

    private io.fabric8.kubernetes.api.model.Event event(String reason) {
        return client.v1().events().inNamespace(NS).list().getItems().stream().filter(e -> reason.equals(e.getReason()))
                .findFirst().orElseThrow(() -> new AssertionError("no " + reason + " Event"));
    }

    private static long version(io.fabric8.kubernetes.api.model.HasMetadata o) {
        return Long.parseLong(o.getMetadata().getResourceVersion());
    }
}
