package io.tbmq.operator.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqClusterSpec;
import io.tbmq.operator.api.Workload;
import io.tbmq.operator.sizing.SizingModel;

class SpecValidatorTest {

    static TbmqClusterSpec valid() {
        TbmqClusterSpec spec = new TbmqClusterSpec();
        spec.setTargetThroughput(200_000);
        spec.getBroker().setCredentialsSecret("tbmq-users");
        return spec;
    }

    private static List<String> fields(TbmqClusterSpec spec) {
        return SpecValidator.validate(spec).stream().map(FieldError::field).toList();
    }

    @Test
    void aNameTooLongForTheNamesDerivedFromItIsRefusedNamingTheLimit() {
        TbmqClusterSpec spec = valid();
        String fits = "a".repeat(40);
        assertThat(SpecValidator.validateName(fits, spec)).isEmpty();
        // Strimzi names the controller pods <name>-kafka-controllers-<id>: Kubernetes allows 63 characters.
        assertThat(SpecValidator.validateName(fits + "b", spec)).singleElement().satisfies(e -> {
            assertThat(e.field()).isEqualTo("metadata.name");
            assertThat(e.message()).contains("41 characters", "at most 40", "-kafka-controllers-");
        });
        spec.getKafka().setMode(Mode.EXTERNAL);
        spec.getKafka().setBootstrapServers("kafka:9092");
        assertThat(SpecValidator.validateName(fits + "bbbbb", spec)).as("no Strimzi pods to name").isEmpty();
        assertThat(SpecValidator.validateName("a".repeat(46), spec)).extracting(FieldError::field).containsExactly("metadata.name");
    }

    @Test
    void aMinimalSpecIsValid() {
        assertThat(SpecValidator.validate(valid())).isEmpty();
    }

    @Test
    void namesTheFieldOfEachError() {
        TbmqClusterSpec spec = valid();
        spec.setTargetThroughput(0);
        spec.getBroker().getPersistence().setDeviceMessagesLimit(70_000);
        spec.getBroker().getPersistence().setDeviceMessageTtl("seven days");
        List<FieldError> errors = SpecValidator.validate(spec);
        assertThat(errors).extracting(FieldError::field).containsExactly("spec.targetThroughput",
                "spec.broker.persistence.deviceMessagesLimit", "spec.broker.persistence.deviceMessageTtl");
        assertThat(errors.get(1).message()).contains("65535").contains("70000");
    }

    @Test
    void externalKafkaNeedsBootstrapServers() {
        TbmqClusterSpec spec = valid();
        spec.getKafka().setMode(Mode.EXTERNAL);
        assertThat(fields(spec)).containsExactly("spec.kafka.bootstrapServers");
        spec.getKafka().setBootstrapServers("kafka-0.kafka:9092,kafka-1");
        assertThat(SpecValidator.validate(spec)).singleElement().extracting(FieldError::message).asString()
                .contains("'kafka-1' is not host:port");
        spec.getKafka().setBootstrapServers("kafka-0.kafka:9092, kafka-1.kafka:9092");
        assertThat(SpecValidator.validate(spec)).isEmpty();
    }

    @Test
    void externalRedisNeedsNodes() {
        TbmqClusterSpec spec = valid();
        spec.getRedis().setMode(Mode.EXTERNAL);
        assertThat(fields(spec)).containsExactly("spec.redis.nodes");
        spec.getRedis().setNodes(List.of("redis-0:6379", "redis-1"));
        assertThat(fields(spec)).containsExactly("spec.redis.nodes[1]");
    }

    @Test
    void noCredentialsAndNoAnonymousAccessIsRefused() {
        TbmqClusterSpec spec = valid();
        spec.getBroker().setCredentialsSecret(null);
        assertThat(fields(spec)).containsExactly("spec.broker.credentialsSecret");
        spec.getBroker().setAllowAnonymous(true);
        assertThat(SpecValidator.validate(spec)).isEmpty();
    }

    @Test
    void tlsListenersNeedASecretAndPortsMustDiffer() {
        TbmqClusterSpec spec = valid();
        spec.getBroker().getListeners().getMqtts().setEnabled(true);
        assertThat(fields(spec)).containsExactly("spec.broker.tlsSecret");
        spec.getBroker().setTlsSecret("tbmq-tls");
        spec.getBroker().getListeners().getMqtts().setPort(1883);
        assertThat(fields(spec)).containsExactly("spec.broker.listeners.mqtts.port");
        spec.getBroker().getListeners().getMqtts().setPort(8883);
        spec.getBroker().getListeners().getMqtt().setEnabled(false);
        spec.getBroker().getListeners().getMqtts().setEnabled(false);
        assertThat(fields(spec)).containsExactly("spec.broker.listeners");
    }

    @Test
    void overridesBelowTheirMinimumAreRefused() {
        TbmqClusterSpec spec = valid();
        spec.getOverrides().setRedisMasters(2);
        spec.getOverrides().setBrokers(0);
        spec.getOverrides().setKafkaBrokers(1);
        spec.getOverrides().setReplicationFactor(3);
        spec.getOverrides().setLettuceBatchSize(20_000);
        assertThat(fields(spec)).containsExactlyInAnyOrder("spec.overrides.brokers", "spec.overrides.redisMasters",
                "spec.overrides.lettuceBatchSize", "spec.overrides.replicationFactor");
    }

    @Test
    void aReplicationFactorAboveTheComputedKafkaBrokersIsRefusedNamingThem() {
        TbmqClusterSpec spec = valid(); // 200k msg/s: 3 Kafka brokers, no override
        spec.getOverrides().setReplicationFactor(4);
        assertThat(SpecValidator.validate(spec)).singleElement().satisfies(e -> {
            assertThat(e.field()).isEqualTo("spec.overrides.replicationFactor");
            assertThat(e.message()).contains("3 Kafka brokers");
        });
        spec.getOverrides().setReplicationFactor(3);
        assertThat(SpecValidator.validate(spec)).isEmpty();
        spec.getOverrides().setReplicationFactor(4);
        spec.getKafka().setMode(Mode.EXTERNAL);
        spec.getKafka().setBootstrapServers("kafka:9092");
        assertThat(SpecValidator.validate(spec)).as("an external Kafka's brokers are not the plan's").isEmpty();
    }

    @Test
    void aTargetNoRedisClusterCanHoldIsRefusedNamingTheLimitBeforeAnythingIsSized() {
        TbmqClusterSpec spec = valid();
        for (long target : new long[] { 2_000_000_000L, Long.MAX_VALUE }) {
            spec.setTargetThroughput(target);
            assertThat(SpecValidator.validate(spec)).singleElement().satisfies(e -> {
                assertThat(e.field()).isEqualTo("spec.targetThroughput");
                assertThat(e.message()).contains("at most 99800000 msg/s", "1000 Redis masters");
            });
        }
        spec.setTargetThroughput(TbmqClusterSpec.MAX_TARGET_THROUGHPUT);
        assertThat(SpecValidator.validate(spec)).isEmpty();
        assertThat(SizingModel.plan(spec).redisMasters().value()).isEqualTo(999);

        // FAN_OUT stores twice P2P's messages: its Redis Cluster is full at half the target.
        spec.setWorkload(Workload.FAN_OUT);
        assertThat(SpecValidator.validate(spec)).singleElement().satisfies(e -> {
            assertThat(e.field()).isEqualTo("spec.targetThroughput");
            assertThat(e.message()).contains("FAN_OUT", "1997 Redis masters", "at most 49900000 msg/s");
        });
        spec.setTargetThroughput(49_900_000);
        assertThat(SpecValidator.validate(spec)).isEmpty();
    }

    @Test
    void moreRedisMastersThanARedisClusterHoldsAreRefused() {
        TbmqClusterSpec spec = valid();
        spec.getOverrides().setRedisMasters(1001);
        assertThat(SpecValidator.validate(spec)).singleElement().satisfies(e -> {
            assertThat(e.field()).isEqualTo("spec.overrides.redisMasters");
            assertThat(e.message()).contains("at most 1000");
        });
        spec.getOverrides().setRedisMasters(1000);
        assertThat(SpecValidator.validate(spec)).isEmpty();
    }

    @Test
    void aRequestAboveItsLimitIsRefusedNamingTheRequestSinceKubernetesWouldRefuseThePodTemplate() {
        // Found only by the StatefulSet write, it came after Kafka and Redis had been changed by the same edit.
        TbmqClusterSpec spec = valid();
        ResourceRequirements redis = new ResourceRequirements();
        redis.setRequests(Map.of("cpu", new Quantity("2"), "memory", new Quantity("1Gi")));
        redis.setLimits(Map.of("cpu", new Quantity("1"), "memory", new Quantity("1024Mi")));
        spec.getRedis().setResources(redis);
        ResourceRequirements broker = new ResourceRequirements();
        broker.setRequests(Map.of("memory", new Quantity("2Gi")));
        broker.setLimits(Map.of("memory", new Quantity("1500Mi"), "cpu", new Quantity("1")));
        spec.getBroker().setResources(broker);
        List<FieldError> errors = SpecValidator.validate(spec);
        assertThat(errors).extracting(FieldError::toString).containsExactlyInAnyOrder(
                "spec.broker.resources.requests.memory: '2Gi' is more than its limit '1500Mi'",
                "spec.redis.resources.requests.cpu: '2' is more than its limit '1'");
        broker.setLimits(Map.of("memory", new Quantity("2Gi")));
        redis.setLimits(Map.of("cpu", new Quantity("2000m")));
        assertThat(SpecValidator.validate(spec)).isEmpty();
    }

    @Test
    void aListenerOnTheBrokersHttpPortIsRefusedSinceTheBrokerCouldNotStart() {
        TbmqClusterSpec spec = valid();
        spec.getBroker().getListeners().getWs().setEnabled(true);
        spec.getBroker().getListeners().getWs().setPort(8080);
        assertThat(SpecValidator.validate(spec)).extracting(FieldError::toString).containsExactly(
                "spec.broker.listeners.ws.port: port 8080 is the broker's HTTP port (health checks and metrics)");
    }

    @Test
    void anImagePullPolicyKubernetesDoesNotKnowIsRefused() {
        TbmqClusterSpec spec = valid();
        spec.getBroker().setImagePullPolicy("always");
        assertThat(SpecValidator.validate(spec)).extracting(FieldError::toString).containsExactly(
                "spec.broker.imagePullPolicy: must be one of Always, IfNotPresent, Never, was 'always'");
        spec.getBroker().setImagePullPolicy("Always");
        assertThat(SpecValidator.validate(spec)).isEmpty();
    }

    @Test
    void quantitiesMustParseAndBePositive() {
        TbmqClusterSpec spec = valid();
        ResourceRequirements r = new ResourceRequirements();
        r.setRequests(Map.of("cpu", new Quantity("-2")));
        spec.getBroker().setResources(r);
        spec.getRedis().getStorage().setSize("lots");
        assertThat(fields(spec)).containsExactlyInAnyOrder("spec.broker.resources.requests.cpu", "spec.redis.storage.size");
    }

    @Test
    void aCpuQuantityBeyondAnyNodeIsRefusedBeforeTheSizingReadsIt() {
        TbmqClusterSpec spec = valid();
        ResourceRequirements r = new ResourceRequirements();
        // 3,000,000 cores: 3e9 millicores, past what the sizing counts in
        r.setRequests(Map.of("cpu", new Quantity("3000000")));
        spec.getBroker().setResources(r);
        ResourceRequirements kafka = new ResourceRequirements();
        kafka.setLimits(Map.of("cpu", new Quantity("1025")));
        spec.getKafka().setResources(kafka);

        List<FieldError> errors = SpecValidator.validate(spec);
        assertThat(errors).extracting(FieldError::field).containsExactlyInAnyOrder("spec.broker.resources.requests.cpu",
                "spec.kafka.resources.limits.cpu");
        assertThat(errors).extracting(FieldError::message).allSatisfy(m -> assertThat(m).contains("more than the 1024 cores"));

        r.setRequests(Map.of("cpu", new Quantity("1024")));
        kafka.setLimits(Map.of("cpu", new Quantity("64000m")));
        assertThat(SpecValidator.validate(spec)).isEmpty();
        assertThat(io.tbmq.operator.sizing.SizingModel.plan(spec).brokerCpuMillis().value()).isEqualTo(1_024_000);
    }
}
