package io.tbmq.operator.desired;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.strimzi.api.kafka.model.kafka.JbodStorage;
import io.strimzi.api.kafka.model.kafka.PersistentClaimStorage;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.operator.api.StorageSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqClusterSpec;
import io.tbmq.operator.sizing.Plan;
import io.tbmq.operator.sizing.SizingModel;
import io.tbmq.operator.validation.SpecValidator;

/** The objects each sample turns into, checked as a user would read them with kubectl. */
class DesiredObjectsTest {

    private static Map<String, String> env(TbmqCluster c, Plan plan, int partitions) {
        Names names = new Names(c.getMetadata().getName(), "iot");
        Map<String, String> all = new java.util.LinkedHashMap<>(BrokerSettings.properties(c, plan, names));
        all.putAll(BrokerSettings.live(c, plan, TopicPartitions.of(c, partitions, 0)));
        return BrokerSettings.environment(all);
    }

    private static void assertOwned(HasMetadata object, TbmqCluster owner) {
        assertThat(object.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
            assertThat(ref.getUid()).isEqualTo(owner.getMetadata().getUid());
            assertThat(ref.getKind()).isEqualTo("TbmqCluster");
            assertThat(ref.getController()).isTrue();
        });
        assertThat(object.getMetadata().getNamespace()).isEqualTo("iot");
    }

    @Test
    void thePapers200kTestIsTable4sFirstRow() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");

        var pool = KafkaModel.brokerPool(c, plan, names);
        assertThat(pool.getSpec().getReplicas()).isEqualTo(3);
        assertThat(pool.getSpec().getRoles()).containsExactly(io.strimzi.api.kafka.model.nodepool.ProcessRoles.BROKER);
        assertThat(pool.getMetadata().getLabels()).containsEntry(KafkaModel.STRIMZI_CLUSTER_LABEL, "p2p-200k-kafka");
        var controllers = KafkaModel.controllerPool(c, names);
        assertThat(controllers.getSpec().getReplicas()).as("a fixed quorum").isEqualTo(3);
        assertThat(controllers.getSpec().getRoles()).containsExactly(io.strimzi.api.kafka.model.nodepool.ProcessRoles.CONTROLLER);
        var kafka = KafkaModel.kafka(c, plan, names);
        assertThat(kafka.getApiVersion()).isEqualTo("kafka.strimzi.io/v1");
        assertThat(kafka.getSpec().getKafka().getConfig()).containsEntry("min.insync.replicas", 2)
                .containsEntry("default.replication.factor", 3);
        assertThat(kafka.getSpec().getCruiseControl().getAutoRebalance()).extracting(a -> a.getMode().toValue())
                .containsExactly("add-brokers", "remove-brokers");
        assertThat(KafkaModel.rebalanceTemplate(c, names).getMetadata().getAnnotations())
                .containsEntry(KafkaModel.REBALANCE_TEMPLATE_ANNOTATION, "true");
        List<KafkaTopic> topics = KafkaModel.topics(c, plan, names, TopicPartitions.of(c, 12, 0));
        assertThat(topics).extracting(t -> t.getSpec().getTopicName())
                .containsExactly("tbmq.msg.all", "tbmq.msg.persisted", "tbmq.client.session", "tbmq.retained.msg",
                        "tbmq.cluster.nodes");
        assertThat(topics.get(0).getSpec().getPartitions()).isEqualTo(12);
        assertThat(topics.get(1).getSpec().getPartitions()).as("only drained: one partition for a new cluster").isEqualTo(1);
        assertThat(KafkaModel.topics(c, plan, names, TopicPartitions.of(c, 12, 6)).get(1).getSpec().getPartitions())
                .as("what an older cluster's has is kept").isEqualTo(6);
        TbmqCluster pinned = Samples.load("tbmq-p2p-200k.yaml", "iot");
        pinned.getSpec().getBroker().setConfig(new java.util.HashMap<>(Map.of("tbmq.persistence.persisted-partitions", "8")));
        assertThat(TopicPartitions.of(pinned, 12, 0).persisted()).as("raised in spec.broker.config").isEqualTo(8);
        assertThat(TopicPartitions.of(pinned, 12, 20).persisted()).as("never lowered").isEqualTo(20);
        pinned.getSpec().getBroker().getConfig().put("tbmq.persistence.persisted-partitions", "many");
        assertThat(TopicPartitions.of(pinned, 12, 0).persisted()).isEqualTo(1);
        assertThat(topics.subList(2, 5)).allSatisfy(t -> assertThat(t.getSpec().getConfig()).containsEntry("cleanup.policy", "compact"));

        StatefulSet redis = RedisModel.statefulSet(c, names, plan.redisMasters().value());
        assertThat(redis.getSpec().getReplicas()).isEqualTo(3);
        Container redisContainer = redis.getSpec().getTemplate().getSpec().getContainers().get(0);
        // Clients follow the pod IP, never a DNS name a cache may still resolve to a restarted pod's old IP.
        assertThat(redisContainer.getArgs()).containsSequence("--cluster-announce-ip", "$(POD_IP)")
                .doesNotContain("--cluster-announce-hostname");
        assertThat(redisContainer.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("POD_IP");
            assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
        });
        assertThat(RedisModel.config(c, names).getData().get("redis.conf")).contains("appendonly yes", "appendfsync everysec",
                "cluster-enabled yes", "cluster-require-full-coverage no");
        c.getSpec().getRedis().setFsync(io.tbmq.operator.api.Fsync.ALWAYS);
        assertThat(RedisModel.config(c, names).getData().get("redis.conf")).as("redis.fsync ALWAYS")
                .contains("appendfsync always").doesNotContain("everysec");
        c.getSpec().getRedis().setFsync(null);
        assertThat(RedisModel.config(c, names).getData().get("redis.conf")).as("a resource stored before the field")
                .contains("appendfsync everysec");
        c.getSpec().getRedis().setFsync(io.tbmq.operator.api.Fsync.EVERYSEC);
        assertThat(redis.getSpec().getVolumeClaimTemplates()).singleElement()
                .satisfies(pvc -> assertThat(pvc.getSpec().getResources().getRequests().get("storage").toString()).isEqualTo("8Gi"));
        assertThat(redis.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Retain");

        Map<String, String> env = env(c, plan, 12);
        assertThat(env).containsEntry("TBMQ_KAFKA_BOOTSTRAP_SERVERS", "p2p-200k-kafka-kafka-bootstrap.iot.svc:9092")
                .containsEntry("TBMQ_REDIS_MODE", "cluster")
                .containsEntry("TBMQ_REDIS_LETTUCE_BATCH_SIZE", "150")
                .containsEntry("TBMQ_KAFKA_MSG_ALL_PARTITIONS", "12")
                .containsEntry("TBMQ_PERSISTENCE_PERSISTED_PARTITIONS", "1")
                .containsEntry("TBMQ_SECURITY_ALLOW_ANONYMOUS", "false")
                .containsEntry("TBMQ_SECURITY_CREDENTIALS_FILE", "/etc/tbmq/credentials/credentials.yaml");
        // The ClusterIP Service first: after every master restarted with a new IP, it still leads to them.
        assertThat(env.get("TBMQ_REDIS_NODES")).startsWith("p2p-200k-redis-client.iot.svc:6379,p2p-200k-redis-0.p2p-200k-redis.iot.svc:6379,");
        Service seed = RedisModel.client(c, names);
        assertThat(seed.getSpec().getType()).isEqualTo("ClusterIP");
        assertThat(seed.getSpec().getPublishNotReadyAddresses()).as("only ready pods behind it").isNotEqualTo(Boolean.TRUE);
        assertThat(seed.getSpec().getSelector()).isEqualTo(redis.getSpec().getSelector().getMatchLabels());

        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names));
        StatefulSet brokers = BrokerModel.statefulSet(c, names, plan, config);
        assertThat(brokers.getSpec().getReplicas()).isEqualTo(1);
        assertThat(brokers.getSpec().getServiceName()).isEqualTo("p2p-200k-broker-nodes");
        Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(broker.getResources().getRequests().get("cpu").toString()).isEqualTo("16000m");
        assertThat(broker.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
        assertThat(broker.getEnvFrom()).singleElement()
                .satisfies(e -> assertThat(e.getConfigMapRef().getName()).isEqualTo("p2p-200k-broker-config"));
        for (HasMetadata o : List.of(pool, kafka, topics.get(0), redis, config, brokers, BrokerModel.disruptionBudget(c, names),
                BrokerModel.clientService(c, names), RedisModel.headless(c, names), seed)) {
            assertOwned(o, c);
        }
    }

    @Test
    void aManagedRedisAndItsBrokersRunWithTheOperatorsCopyOfThePassword() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        c.getSpec().getRedis().setPasswordSecret("redis-auth");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        Container redis = RedisModel.statefulSet(c, names, 3).getSpec().getTemplate().getSpec().getContainers().get(0);
        // The user's Secret says what the password should be; the copy what is in force, so a change can roll out in steps.
        assertThat(redis.getEnv()).filteredOn(e -> e.getName().equals("REDIS_PASSWORD")).singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("p2p-200k-redis-password"));
        assertThat(redis.getArgs()).containsSubsequence("--requirepass", "$(REDIS_PASSWORD)", "--masterauth", "$(REDIS_PASSWORD)");
        // A pod started with the old password stays ready once the operator has made every node refuse it.
        String probe = String.join(" ", redis.getReadinessProbe().getExec().getCommand());
        assertThat(probe).contains("--user tbmq-probe").doesNotContain("REDIS_PASSWORD");
        assertThat(RedisModel.config(c, names).getData().get("redis.conf")).contains("user tbmq-probe on nopass -@all +ping");

        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names));
        var brokers = BrokerModel.statefulSet(c, names, plan, config, "4711");
        assertThat(brokers.getSpec().getTemplate().getMetadata().getAnnotations())
                .as("a new password rolls the brokers").containsEntry(BrokerModel.REDIS_PASSWORD_VERSION, "4711");
        assertThat(brokers.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
                .filteredOn(e -> e.getName().equals("TBMQ_REDIS_PASSWORD")).singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("p2p-200k-redis-password"));

        TbmqCluster unnamed = Samples.load("tbmq-p2p-200k.yaml", "iot");
        assertThat(RedisModel.statefulSet(unnamed, names, 3).getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
                .as("a password even when the spec names none: the operator generates one").contains("--requirepass");
        assertThat(BrokerModel.redisPasswordSecret(unnamed, names)).isEqualTo("p2p-200k-redis-password");

        var copy = RedisModel.passwordSecret(c, names, "new", "old", 2);
        assertOwned(copy, c);
        assertThat(copy.getData()).containsOnlyKeys("password", "previous");
        assertThat(copy.getMetadata().getAnnotations()).containsEntry(RedisModel.PASSWORD_GENERATION, "2");
        assertThat(RedisModel.passwordSecret(c, names, "new", null, 2).getData()).containsOnlyKeys("password");
    }

    @Test
    void thePapers1MTestIsTable4sLastRow() {
        TbmqCluster c = Samples.load("tbmq-p2p-1m.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        assertThat(KafkaModel.brokerPool(c, plan, names).getSpec().getReplicas()).isEqualTo(5);
        assertThat(RedisModel.statefulSet(c, names, plan.redisMasters().value()).getSpec().getReplicas()).isEqualTo(11);
        assertThat(env(c, plan, plan.partitions().value())).containsEntry("TBMQ_REDIS_LETTUCE_BATCH_SIZE", "500")
                .containsEntry("TBMQ_KAFKA_MSG_ALL_PARTITIONS", "20");
        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names));
        assertThat(BrokerModel.statefulSet(c, names, plan, config).getSpec().getReplicas()).isEqualTo(5);
    }

    @Test
    void anExternalSampleTakesAddressesAndSecretsFromTheSpec() {
        TbmqCluster c = Samples.load("tbmq-external.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        Map<String, String> env = env(c, plan, plan.partitions().value());
        assertThat(env).containsEntry("TBMQ_KAFKA_BOOTSTRAP_SERVERS", "kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092")
                .containsEntry("TBMQ_REDIS_NODES", "redis-0.redis.data.svc:6379,redis-1.redis.data.svc:6379")
                .containsEntry("TBMQ_KAFKA_PROPERTIES_FILE", "/etc/tbmq/kafka/client.properties");
        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names));
        var sts = BrokerModel.statefulSet(c, names, plan, config, "12");
        var pod = sts.getSpec().getTemplate().getSpec();
        assertThat(sts.getSpec().getTemplate().getMetadata().getAnnotations()).as("a change of the user's Secret rolls the brokers")
                .containsEntry(BrokerModel.REDIS_PASSWORD_VERSION, "12");
        assertThat(pod.getVolumes()).filteredOn(v -> v.getSecret() != null).extracting(v -> v.getSecret().getSecretName())
                .contains("kafka-client", "fleet-users");
        assertThat(pod.getContainers().get(0).getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("TBMQ_REDIS_PASSWORD");
            assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("redis-auth");
        });
    }

    @Test
    void aRedisPasswordInTheSpecIsLeftOutOfTheConfigMapWhereASecretHoldsIt() {
        TbmqCluster c = Samples.load("tbmq-external.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        c.getSpec().getBroker().getConfig().put("tbmq.redis.password", "in plain sight");
        assertThat(BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)).getData())
                .as("the pod sets it from spec.redis.passwordSecret").doesNotContainKey("TBMQ_REDIS_PASSWORD");
        c.getSpec().getRedis().setPasswordSecret(null);
        assertThat(BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)).getData())
                .as("an external Redis without a Secret: the only place it is given").containsEntry("TBMQ_REDIS_PASSWORD", "in plain sight");
    }

    @Test
    void eachBrokerKnowsItsPodSoThatAContainerRestartedInItNeedNotWaitForItsPredecessor() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Names names = new Names(c.getMetadata().getName(), "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names));
        var env = BrokerModel.statefulSet(c, names, plan, config, "1").getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
        assertThat(env).filteredOn(e -> e.getName().equals("TBMQ_NODE_ID")).singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name"));
        assertThat(env).filteredOn(e -> e.getName().equals("TBMQ_CLUSTER_POD_UID")).singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.uid"));
    }

    @Test
    void eachBrokerNamesItsClusterSoThatAnotherClusterOnTheSameKafkaTopicsIsToldApart() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Names names = new Names(c.getMetadata().getName(), "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names));
        var env = BrokerModel.statefulSet(c, names, plan, config, "1").getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
        assertThat(env).filteredOn(e -> e.getName().equals("TBMQ_CLUSTER_NAME")).singleElement()
                .satisfies(e -> assertThat(e.getValue()).isEqualTo("iot/" + c.getMetadata().getName()));
    }

    @Test
    void aStorageBlockWithoutASizeGetsTheDefaultSize() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        // As a user writes it: {"redis": {"storage": {"deleteClaim": true}}}, no size.
        c.getSpec().getRedis().setStorage(Serialization.unmarshal("{\"deleteClaim\": true}", StorageSpec.class));
        c.getSpec().getKafka().setStorage(Serialization.unmarshal("{\"storageClass\": \"fast\"}", StorageSpec.class));
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");

        StatefulSet redis = RedisModel.statefulSet(c, names, plan.redisMasters().value());
        var claim = redis.getSpec().getVolumeClaimTemplates().get(0);
        assertThat(claim.getSpec().getResources().getRequests().get("storage")).isEqualTo(new Quantity("8Gi"));
        assertThat(redis.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Delete");
        var volume = (PersistentClaimStorage) ((JbodStorage) KafkaModel.brokerPool(c, plan, names).getSpec().getStorage())
                .getVolumes().get(0);
        assertThat(volume.getSize()).isEqualTo("20Gi");
        assertThat(volume.getStorageClass()).isEqualTo("fast");
    }

    @Test
    void aListenerGivenInPartKeepsTheDefaultsOfWhatIsLeftOut() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        c.setSpec(Serialization.unmarshal("""
                {"targetThroughput": 200000, "broker": {"credentialsSecret": "fleet-users",
                  "listeners": {"mqtt": {"port": 1884}, "ws": {"enabled": true}}}}""", TbmqClusterSpec.class));
        assertThat(SpecValidator.validate(c.getSpec())).isEmpty();
        Names names = new Names(c.getMetadata().getName(), "iot");
        // MQTT stays on, on the port given; WebSocket turns on, on its default port.
        assertThat(BrokerModel.clientService(c, names).getSpec().getPorts()).extracting(ServicePort::getPort)
                .containsExactly(1884, 8083);
        assertThat(env(c, SizingModel.plan(c.getSpec()), 12)).containsEntry("TBMQ_LISTENERS_TCP_ENABLED", "true")
                .containsEntry("TBMQ_LISTENERS_TCP_PORT", "1884").containsEntry("TBMQ_LISTENERS_TLS_ENABLED", "false");
    }

    @Test
    void theTlsSampleExposesOnlyTheSecureListenersOnALoadBalancer() {
        TbmqCluster c = Samples.load("tbmq-tls.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        var service = BrokerModel.clientService(c, names);
        assertThat(service.getSpec().getType()).isEqualTo("LoadBalancer");
        assertThat(service.getSpec().getPorts()).extracting(ServicePort::getPort).containsExactly(8883, 8084);
        Map<String, String> env = env(c, plan, 12);
        assertThat(env).containsEntry("TBMQ_LISTENERS_TCP_ENABLED", "false")
                .containsEntry("TBMQ_LISTENERS_TLS_ENABLED", "true")
                .containsEntry("TBMQ_LISTENERS_TLS_CERT", "/etc/tbmq/tls/tls.crt")
                .containsEntry("TBMQ_LISTENERS_WSS_KEY", "/etc/tbmq/tls/tls.key");
    }

    @Test
    void aRestartSettingRollsTheBrokersButAScaleEditDoesNot() {
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        String key = BrokerModel.CONFIG_HASH;
        var before = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)));
        // A scale edit: more partitions, a larger Lettuce batch, more replication. Live settings: nothing rolls.
        TbmqCluster scaled = Samples.load("tbmq-dev.yaml", "iot");
        scaled.getSpec().setTargetThroughput(800_000);
        Plan bigger = SizingModel.plan(scaled.getSpec());
        var after = BrokerModel.statefulSet(scaled, names, bigger, BrokerModel.config(scaled, names,
                BrokerSettings.properties(scaled, bigger, names)));
        assertThat(after.getSpec().getTemplate().getMetadata().getAnnotations().get(key))
                .isEqualTo(before.getSpec().getTemplate().getMetadata().getAnnotations().get(key));
        assertThat(BrokerSettings.live(scaled, bigger, TopicPartitions.of(scaled, 16, 12))).containsEntry("tbmq.redis.lettuce-batch-size", "400")
                .containsEntry("tbmq.kafka.msg-all-partitions", "16");
        assertThat(BrokerModel.liveConfig(scaled, names, BrokerSettings.live(scaled, bigger, TopicPartitions.of(scaled, 16, 12))).getData()
                .get("live.properties")).contains("tbmq.persistence.persisted-partitions=12");
        // A setting read at start: the brokers roll, one at a time.
        c.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-keep-alive", "60");
        var changed = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)));
        assertThat(changed.getSpec().getTemplate().getMetadata().getAnnotations().get(key))
                .isNotEqualTo(before.getSpec().getTemplate().getMetadata().getAnnotations().get(key));
    }

    @Test
    void limitsAndLogLevelsInTheSpecGoToTheLiveFileAndRollNothing() {
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        String key = BrokerModel.CONFIG_HASH;
        var before = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)));
        Map<String, String> live = Map.of("tbmq.listeners.tcp.max-connections", "5000", "tbmq.listeners.wss.max-connection-rate", "100",
                "tbmq.security.password-cache-size", "50", "quarkus.log.level", "WARN",
                "quarkus.log.category.\"io.tbmq.broker.protocol\".level", "DEBUG");
        c.getSpec().getBroker().getConfig().putAll(live);
        var after = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)));
        assertThat(after.getSpec().getTemplate().getMetadata().getAnnotations().get(key))
                .isEqualTo(before.getSpec().getTemplate().getMetadata().getAnnotations().get(key));
        assertThat(BrokerSettings.properties(c, plan, names)).doesNotContainKeys(live.keySet().toArray(String[]::new));
        assertThat(BrokerSettings.live(c, plan, TopicPartitions.of(c, 12, 1))).containsAllEntriesOf(live);
        // Not live: a listener's port, another logging key.
        assertThat(BrokerSettings.isLive("tbmq.listeners.tcp.port")).isFalse();
        assertThat(BrokerSettings.isLive("tbmq.listeners.other.max-connections")).isFalse();
        assertThat(BrokerSettings.isLive("quarkus.log.console.level")).isFalse();
    }

    @Test
    void anAdminSecretIsMountedAndNamedAsTheTokenFile() {
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        assertThat(BrokerSettings.properties(c, plan, names)).doesNotContainKey("tbmq.admin.token-file");
        c.getSpec().getBroker().setAdminSecret("dev-admin");
        assertThat(BrokerSettings.properties(c, plan, names)).containsEntry("tbmq.admin.token-file", "/etc/tbmq/admin/token");
        var pod = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)))
                .getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getSecret() != null).extracting(v -> v.getSecret().getSecretName())
                .contains("dev-admin");
        assertThat(pod.getContainers().get(0).getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getMountPath()).isEqualTo("/etc/tbmq/admin");
            assertThat(m.getReadOnly()).isTrue();
        });
    }

    @Test
    void theLiveSettingsAreTheOnesDocumented() throws Exception {
        String docs = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md"));
        String section = docs.substring(docs.indexOf("## Live settings"));
        int end = section.indexOf("\n## ", 3);
        java.util.List<String> documented = new java.util.ArrayList<>();
        for (String line : (end < 0 ? section : section.substring(0, end)).split("\n")) {
            if (line.startsWith("| `")) {
                documented.add(line.substring(3, line.indexOf('`', 3)));
            }
        }
        assertThat(BrokerSettings.LIVE).containsExactlyInAnyOrderElementsOf(documented);
    }

    @Test
    void everyPodPassesTheRestrictedPodSecurityStandard() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        var brokers = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)));
        var redis = RedisModel.statefulSet(c, names, 3);
        for (StatefulSet sts : List.of(brokers, redis)) {
            var pod = sts.getSpec().getTemplate().getSpec();
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
            assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
            for (Container container : pod.getContainers()) {
                assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
                assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
                assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
            }
        }
        assertThat(redis.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsUser()).as("redis, not root").isEqualTo(999);
    }

    @Test
    void redisRefusesWritesWhenFullInsteadOfEvictingOrBeingKilled() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Names names = new Names(c.getMetadata().getName(), "iot");
        Container redis = RedisModel.statefulSet(c, names, 3).getSpec().getTemplate().getSpec().getContainers().get(0);
        // 4Gi limit (Table 3's Redis nodes): maxmemory 60% of it, the rest for the append-only file's rewrite.
        assertThat(redis.getResources().getLimits().get("memory").toString()).isEqualTo("4Gi");
        assertThat(redis.getArgs()).containsSubsequence("--maxmemory", Long.toString(4L * 1024 * 1024 * 1024 * 60 / 100))
                .containsSubsequence("--maxmemory-policy", "noeviction");
        assertThat(RedisModel.disruptionBudget(c, names).getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    }

    @Test
    void theBrokersJvmFitsItsContainerLimit() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        var brokers = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names)));
        Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        // 32 GiB (Table 3): heap 16 GiB, direct memory 8 GiB, the rest the JVM's own.
        assertThat(broker.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("JAVA_TOOL_OPTIONS");
            assertThat(e.getValue()).isEqualTo("-Xmx16384m -XX:MaxDirectMemorySize=8192m");
        });
    }

    @Test
    void userSettingsBecomeEnvironmentVariables() {
        assertThat(BrokerSettings.envName("tbmq.mqtt.max-keep-alive")).isEqualTo("TBMQ_MQTT_MAX_KEEP_ALIVE");
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        c.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-keep-alive", "60");
        assertThat(env(c, SizingModel.plan(c.getSpec()), 12)).containsEntry("TBMQ_MQTT_MAX_KEEP_ALIVE", "60");
    }
}
