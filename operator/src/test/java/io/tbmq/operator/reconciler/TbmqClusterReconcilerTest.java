package io.tbmq.operator.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.Samples;

/** What a TbmqCluster that cannot be applied yet gets back, without an API server: it is refused before anything is read or written. */
class TbmqClusterReconcilerTest {
    private final TbmqClusterReconciler reconciler = new TbmqClusterReconciler((pod, ordinal) -> {
        throw new AssertionError("no Redis in this test");
    }, TbmqClusterReconciler.Settings.defaults(false));

    private static Condition degraded(TbmqCluster c) {
        return Conditions.find(c.getStatus().getConditions(), Conditions.DEGRADED);
    }

    @Test
    void aMissingSecretIsLookedForAgainSinceItsCreationWakesNothing() {
        TbmqCluster c = Samples.load("tbmq-tls.yaml", "iot");
        // The users' Secret exists; the certificate's (mqtt-tls) does not yet.
        reconciler.secrets = (client, namespace, name) -> name.equals("fleet-users")
                ? new SecretBuilder().withNewMetadata().withName(name).endMetadata().addToData("credentials.yaml", "eA==").build()
                : null;

        UpdateControl<TbmqCluster> control = reconciler.reconcile(c, null, null);

        assertThat(degraded(c).getStatus()).isEqualTo("True");
        assertThat(degraded(c).getMessage()).isEqualTo("spec.broker.tlsSecret: Secret 'mqtt-tls' not found in the TbmqCluster's namespace");
        assertThat(control.isPatchStatus()).isTrue();
        assertThat(control.getScheduleDelay()).contains(TbmqClusterReconciler.WHILE_SECRET_MISSING.toMillis());
    }

    @Test
    void anInvalidFieldWaitsForTheEditThatFixesIt() {
        TbmqCluster c = Samples.load("tbmq-tls.yaml", "iot");
        c.getSpec().getOverrides().setReplicationFactor(4);
        reconciler.secrets = (client, namespace, name) -> {
            throw new AssertionError("an invalid spec is refused before its Secrets are read");
        };

        UpdateControl<TbmqCluster> control = reconciler.reconcile(c, null, null);

        assertThat(degraded(c).getReason()).isEqualTo("InvalidSpec");
        assertThat(degraded(c).getMessage()).startsWith("spec.overrides.replicationFactor");
        assertThat(control.getScheduleDelay()).as("the edit that fixes it starts a reconcile").isEmpty();
    }

    @Test
    void aReconcileThatKeepsFailingIsTriedAgainForAsLongAsItFailsAtLeastOnceAMinute() {
        // java-operator-sdk reads the reconcilers' retry as the operator runs them (quarkus-operator-sdk at build time).
        var service = new io.javaoperatorsdk.operator.api.config.BaseConfigurationService();
        for (io.javaoperatorsdk.operator.api.reconciler.Reconciler<?> r : java.util.List.of(reconciler, new TbmqUserReconciler())) {
            var retry = service.getConfigurationFor(r).getRetry().initExecution();
            assertThat(retry.nextDelay()).contains(2000L);
            long delay = 0;
            // An hour of failures and more: JOSDK's default would have given up after five.
            for (int attempt = 1; attempt < 100; attempt++) {
                delay = retry.nextDelay().orElseThrow();
                assertThat(delay).isBetween(2000L, 60_000L);
            }
            assertThat(delay).isEqualTo(60_000L);
        }
    }
}
