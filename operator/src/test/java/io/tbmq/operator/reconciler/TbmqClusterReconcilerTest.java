package io.tbmq.operator.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.api.TbmqClusterSpec;

class TbmqClusterReconcilerTest {

    private static TbmqCluster cluster(long target, long generation) {
        TbmqCluster c = new TbmqCluster();
        c.setMetadata(new ObjectMetaBuilder().withName("fleet").withNamespace("iot").withGeneration(generation).build());
        TbmqClusterSpec spec = new TbmqClusterSpec();
        spec.setTargetThroughput(target);
        spec.getBroker().setCredentialsSecret("users");
        c.setSpec(spec);
        return c;
    }

    @Test
    void aValidSpecGetsItsPlanInTheStatus() {
        TbmqCluster c = cluster(400_000, 1);
        new TbmqClusterReconciler().reconcile(c, null);
        assertThat(c.getStatus().getObservedGeneration()).isEqualTo(1);
        assertThat(c.getStatus().getPlan().getBrokers().getValue()).isEqualTo("2");
        assertThat(c.getStatus().getPlan().getRedisMasters().getValue()).isEqualTo("5");
        assertThat(c.getStatus().getPlan().getLettuceBatchSize().getRule()).contains("Table 5");
        assertThat(c.getStatus().getDesiredBrokers()).isEqualTo(2);
        assertThat(Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED).getStatus()).isEqualTo("False");
    }

    @Test
    void anInvalidEditIsDegradedNamingTheFieldAndKeepsTheLastPlan() {
        TbmqCluster c = cluster(400_000, 1);
        TbmqClusterReconciler reconciler = new TbmqClusterReconciler();
        reconciler.reconcile(c, null);
        String validSince = Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED).getLastTransitionTime();

        c.getMetadata().setGeneration(2L);
        c.getSpec().getBroker().getPersistence().setDeviceMessagesLimit(100_000);
        reconciler.reconcile(c, null);
        Condition degraded = Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED);
        assertThat(degraded.getStatus()).isEqualTo("True");
        assertThat(degraded.getReason()).isEqualTo("InvalidSpec");
        assertThat(degraded.getMessage()).contains("spec.broker.persistence.deviceMessagesLimit");
        assertThat(degraded.getObservedGeneration()).isEqualTo(2);
        assertThat(c.getStatus().getPlan().getBrokers().getValue()).isEqualTo("2");

        c.getMetadata().setGeneration(3L);
        c.getSpec().getBroker().getPersistence().setDeviceMessagesLimit(10_000);
        c.getSpec().setTargetThroughput(600_000);
        reconciler.reconcile(c, null);
        assertThat(Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED).getStatus()).isEqualTo("False");
        assertThat(c.getStatus().getPlan().getBrokers().getValue()).isEqualTo("3");
        assertThat(validSince).isNotNull();
    }

    @Test
    void aSteadyConditionKeepsItsTransitionTime() {
        TbmqCluster c = cluster(200_000, 1);
        TbmqClusterReconciler reconciler = new TbmqClusterReconciler();
        reconciler.reconcile(c, null);
        Condition first = Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED);
        first.setLastTransitionTime("2020-01-01T00:00:00Z");
        reconciler.reconcile(c, null);
        assertThat(Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED).getLastTransitionTime())
                .isEqualTo("2020-01-01T00:00:00Z");
    }
}
