package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.strimzi.api.kafka.model.common.Condition;
import io.strimzi.api.kafka.model.common.ConditionBuilder;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.kafka.KafkaBuilder;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePoolBuilder;

class StrimziReadinessTest {
    /** Strimzi's words when a node pool's storage change is not allowed (it keeps the volumes, and the Kafka Ready). */
    private static final String IGNORED = "The desired Kafka storage configuration in the KafkaNodePool resource iot/dev-kafka-brokers"
            + " contains changes which are not allowed. As a result, all storage changes will be ignored.";

    private static Condition condition(String type, String reason, String message) {
        return new ConditionBuilder().withType(type).withStatus("True").withReason(reason).withMessage(message).build();
    }

    private static Kafka kafka(Condition... conditions) {
        return new KafkaBuilder().withNewMetadata().withName("dev-kafka").withNamespace("iot").withGeneration(3L).endMetadata()
                .withNewStatus().withObservedGeneration(3L).withConditions(conditions).endStatus().build();
    }

    private static KafkaNodePool pool(Condition... conditions) {
        return new KafkaNodePoolBuilder().withNewMetadata().withName("dev-kafka-brokers").withGeneration(2L).endMetadata()
                .withNewSpec().withReplicas(1).endSpec()
                .withNewStatus().withObservedGeneration(2L).withReplicas(1).withConditions(conditions).endStatus().build();
    }

    private static ComponentStatus of(Kafka kafka, KafkaNodePool pool) {
        return StrimziReadiness.of(kafka, List.of(pool), List.of(), 1, Instant.now(), Duration.ofMinutes(3));
    }

    @Test
    void aStorageChangeStrimziIgnoresIsANoticeNamingTheFieldWhileKafkaStaysReady() {
        // Strimzi reports it on the Kafka, on the node pool, or on both.
        for (var status : List.of(of(kafka(condition("Ready", null, null), condition("Warning", "KafkaStorage", IGNORED)), pool()),
                of(kafka(condition("Ready", null, null)), pool(condition("Warning", "KafkaStorage", IGNORED))))) {
            assertThat(status.ready()).isTrue();
            assertThat(status.notices()).singleElement().satisfies(n -> {
                assertThat(n.type()).isEqualTo(StrimziReadiness.STORAGE_NOT_APPLIED);
                assertThat(n.message()).startsWith("spec.kafka.storage: ").contains(IGNORED);
            });
        }
    }

    @Test
    void theNoticeStaysWhileStrimziRollsSoTheConditionDoesNotComeAndGo() {
        Kafka rolling = kafka(condition("NotReady", "Rolling", "rolling"), condition("Warning", "KafkaStorage", IGNORED));
        ComponentStatus status = of(rolling, pool());
        assertThat(status.ready()).isFalse();
        assertThat(status.notices()).extracting(ComponentStatus.Notice::type).containsExactly(StrimziReadiness.STORAGE_NOT_APPLIED);
    }

    @Test
    void otherWarningsAreNoStorageNotice() {
        ComponentStatus status = of(kafka(condition("Ready", null, null), condition("Warning", "KafkaMetadataVersion", "older")), pool());
        assertThat(status.ready()).isTrue();
        assertThat(status.notices()).isEmpty();
    }
}
