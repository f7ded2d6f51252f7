package io.tbmq.operator.desired;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.sizing.Plan;
import io.tbmq.operator.sizing.SizingModel;

/** The objects each sample turns into, checked as a user would read them with kubectl. */
class DesiredObjectsTest {

    private static Map<String, String> env(TbmqCluster c, Plan plan, int partitions) {
        Names names = new Names(c.getMetadata().getName(), "iot");
        return BrokerSettings.environment(BrokerSettings.properties(c, plan, names, partitions));
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
    void theSeeds200kTestIsTable4sFirstRow() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");

        var pool = KafkaModel.nodePool(c, plan, names);
        assertThat(pool.getSpec().getReplicas()).isEqualTo(3);
        assertThat(pool.getMetadata().getLabels()).containsEntry(KafkaModel.STRIMZI_CLUSTER_LABEL, "p2p-200k-kafka");
        var kafka = KafkaModel.kafka(c, plan, names);
        assertThat(kafka.getApiVersion()).isEqualTo("kafka.strimzi.io/v1");
        assertThat(kafka.getSpec().getKafka().getConfig()).containsEntry("min.insync.replicas", 2)
                .containsEntry("default.replication.factor", 3);
        List<KafkaTopic> topics = KafkaModel.topics(c, plan, names, 12);
        assertThat(topics).extracting(t -> t.getSpec().getTopicName())
                .containsExactly("tbmq.msg.all", "tbmq.msg.persisted", "tbmq.client.session", "tbmq.retained.msg",
                        "tbmq.cluster.nodes");
        assertThat(topics.get(0).getSpec().getPartitions()).isEqualTo(12);
        assertThat(topics.subList(2, 5)).allSatisfy(t -> assertThat(t.getSpec().getConfig()).containsEntry("cleanup.policy", "compact"));

        StatefulSet redis = RedisModel.statefulSet(c, names, plan.redisMasters().value());
        assertThat(redis.getSpec().getReplicas()).isEqualTo(3);
        Container redisContainer = redis.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(redisContainer.getArgs()).contains("--cluster-announce-hostname",
                "$(POD_NAME).p2p-200k-redis.$(POD_NAMESPACE).svc");
        assertThat(RedisModel.config(c, names).getData().get("redis.conf")).contains("appendonly yes", "appendfsync everysec",
                "cluster-enabled yes");
        assertThat(redis.getSpec().getVolumeClaimTemplates()).singleElement()
                .satisfies(pvc -> assertThat(pvc.getSpec().getResources().getRequests().get("storage").toString()).isEqualTo("8Gi"));
        assertThat(redis.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted()).isEqualTo("Retain");

        Map<String, String> env = env(c, plan, 12);
        assertThat(env).containsEntry("TBMQ_KAFKA_BOOTSTRAP_SERVERS", "p2p-200k-kafka-kafka-bootstrap.iot.svc:9092")
                .containsEntry("TBMQ_REDIS_MODE", "cluster")
                .containsEntry("TBMQ_REDIS_LETTUCE_BATCH_SIZE", "150")
                .containsEntry("TBMQ_KAFKA_MSG_ALL_PARTITIONS", "12")
                .containsEntry("TBMQ_PERSISTENCE_PERSISTED_PARTITIONS", "12")
                .containsEntry("TBMQ_SECURITY_ALLOW_ANONYMOUS", "false")
                .containsEntry("TBMQ_SECURITY_CREDENTIALS_FILE", "/etc/tbmq/credentials/credentials.yaml");
        assertThat(env.get("TBMQ_REDIS_NODES")).startsWith("p2p-200k-redis-0.p2p-200k-redis.iot.svc:6379,");

        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names, 12));
        StatefulSet brokers = BrokerModel.statefulSet(c, names, plan, config);
        assertThat(brokers.getSpec().getReplicas()).isEqualTo(1);
        assertThat(brokers.getSpec().getServiceName()).isEqualTo("p2p-200k-broker-nodes");
        Container broker = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(broker.getResources().getRequests().get("cpu").toString()).isEqualTo("16000m");
        assertThat(broker.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
        assertThat(broker.getEnvFrom()).singleElement()
                .satisfies(e -> assertThat(e.getConfigMapRef().getName()).isEqualTo("p2p-200k-broker-config"));
        for (HasMetadata o : List.of(pool, kafka, topics.get(0), redis, config, brokers, BrokerModel.disruptionBudget(c, names),
                BrokerModel.clientService(c, names), RedisModel.headless(c, names))) {
            assertOwned(o, c);
        }
    }

    @Test
    void theSeeds1MTestIsTable4sLastRow() {
        TbmqCluster c = Samples.load("tbmq-p2p-1m.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        assertThat(KafkaModel.nodePool(c, plan, names).getSpec().getReplicas()).isEqualTo(5);
        assertThat(RedisModel.statefulSet(c, names, plan.redisMasters().value()).getSpec().getReplicas()).isEqualTo(11);
        assertThat(env(c, plan, plan.partitions().value())).containsEntry("TBMQ_REDIS_LETTUCE_BATCH_SIZE", "500")
                .containsEntry("TBMQ_KAFKA_MSG_ALL_PARTITIONS", "20");
        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names, 20));
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
        var config = BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names, 12));
        var pod = BrokerModel.statefulSet(c, names, plan, config).getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).extracting(v -> v.getSecret().getSecretName()).contains("kafka-client", "fleet-users");
        assertThat(pod.getContainers().get(0).getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("TBMQ_REDIS_PASSWORD");
            assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("redis-auth");
        });
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
    void aSettingChangeChangesThePodTemplateSoBrokersRoll() {
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        Plan plan = SizingModel.plan(c.getSpec());
        Names names = new Names(c.getMetadata().getName(), "iot");
        var before = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names, 12)));
        var same = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names, 12)));
        var raised = BrokerModel.statefulSet(c, names, plan, BrokerModel.config(c, names, BrokerSettings.properties(c, plan, names, 16)));
        String key = BrokerModel.CONFIG_HASH;
        assertThat(same.getSpec().getTemplate().getMetadata().getAnnotations().get(key))
                .isEqualTo(before.getSpec().getTemplate().getMetadata().getAnnotations().get(key));
        assertThat(raised.getSpec().getTemplate().getMetadata().getAnnotations().get(key))
                .isNotEqualTo(before.getSpec().getTemplate().getMetadata().getAnnotations().get(key));
    }

    @Test
    void userSettingsBecomeEnvironmentVariables() {
        assertThat(BrokerSettings.envName("tbmq.mqtt.max-keep-alive")).isEqualTo("TBMQ_MQTT_MAX_KEEP_ALIVE");
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        c.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-keep-alive", "60");
        assertThat(env(c, SizingModel.plan(c.getSpec()), 12)).containsEntry("TBMQ_MQTT_MAX_KEEP_ALIVE", "60");
    }
}
