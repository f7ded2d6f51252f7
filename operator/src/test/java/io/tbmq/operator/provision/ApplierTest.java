package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ApplierTest {

    @Test
    void thePodTemplateDigestChangesWithWhatTheDryRunPodIsMadeOfOnly() {
        String three = Applier.podTemplateDigest(statefulSet(3, "300Mi", "data", "8Gi"));
        assertThat(Applier.podTemplateDigest(statefulSet(5, "300Mi", "data", "8Gi"))).as("scaled").isEqualTo(three);
        // A volume expansion deletes the StatefulSet around its pods and writes it again: not a change of its pods.
        assertThat(Applier.podTemplateDigest(statefulSet(3, "300Mi", "data", "16Gi"))).as("larger volumes").isEqualTo(three);
        assertThat(Applier.podTemplateDigest(statefulSet(3, "400Mi", "data", "8Gi"))).as("other resources").isNotEqualTo(three);
        assertThat(Applier.podTemplateDigest(statefulSet(3, "300Mi", "aof", "8Gi"))).as("another volume").isNotEqualTo(three);
    }

    private static io.fabric8.kubernetes.api.model.apps.StatefulSet statefulSet(int replicas, String memory, String claim, String storage) {
        return new io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder().withNewMetadata().withName("dev-redis").endMetadata()
                .withNewSpec().withReplicas(replicas).withNewTemplate().withNewSpec().addNewContainer().withName("redis")
                .withNewResources().addToRequests("memory", new io.fabric8.kubernetes.api.model.Quantity(memory)).endResources()
                .endContainer().endSpec().endTemplate().addNewVolumeClaimTemplate().withNewMetadata().withName(claim).endMetadata()
                .withNewSpec().withNewResources().addToRequests("storage", new io.fabric8.kubernetes.api.model.Quantity(storage))
                .endResources().endSpec().endVolumeClaimTemplate().endSpec().build();
    }

    @Test
    void onlyARefusalOfThePodItselfStopsAStatefulSetWrite() {
        String pod = "dev-redis-check";
        // The API server's own validation, PodSecurity and LimitRanges would refuse the StatefulSet's pods too.
        assertThat(Applier.refusesThePod(422, "Pod \"dev-redis-check\" is invalid: [spec.containers[0].resources.limits[gpu]: "
                + "Invalid value: gpu: must be a standard resource type or fully qualified]", pod)).isTrue();
        assertThat(Applier.refusesThePod(403, "pods \"dev-redis-check\" is forbidden: violates PodSecurity \"restricted:latest\": "
                + "allowPrivilegeEscalation != false", pod)).isTrue();
        assertThat(Applier.refusesThePod(403, "pods \"dev-redis-check\" is forbidden: maximum memory usage per Container is 1Gi, "
                + "but limit is 2Gi", pod)).isTrue();
        assertThat(Applier.refusesThePod(403, "pods \"dev-redis-check\" is forbidden: cpu max limit to request ratio per Container "
                + "is 2, but provided ratio is 4.000000", pod)).isTrue();
        // A quota counts this pod on top of the ones a rolling replacement swaps one for one; policies may look at who made it.
        assertThat(Applier.refusesThePod(403, "pods \"dev-redis-check\" is forbidden: exceeded quota: pods, requested: pods=1, "
                + "used: pods=10, limited: pods=10", pod)).isFalse();
        assertThat(Applier.refusesThePod(422, "pods \"dev-redis-check\" is forbidden: ValidatingAdmissionPolicy 'no-bare-pods' "
                + "with binding 'b' denied request: pods must have an owner", pod)).isFalse();
        assertThat(Applier.refusesThePod(400, "admission webhook \"validate.kyverno.svc\" denied the request", pod)).isFalse();
        assertThat(Applier.refusesThePod(403, "admission webhook \"validate.kyverno.svc\" denied the request: violates PodSecurity "
                + "\"restricted\"", pod)).as("a policy borrowing PodSecurity's words").isFalse();
        assertThat(Applier.refusesThePod(403, "pods \"dev-redis-check\" is forbidden: [maximum cpu usage per Container is 2, but limit "
                + "is 4, minimum memory usage per Container is 64Mi, but request is 32Mi]", pod)).isTrue();
        assertThat(Applier.refusesThePod(500, null, pod)).isFalse();
    }

    @Test
    void aQuotaTheTestPodExceedsHasLetItPassTheChecksOfThePodItselfAndNothingElseHas() {
        String pod = "dev-redis-check";
        // Admission asks ResourceQuota last: LimitRanges and PodSecurity found nothing to refuse.
        assertThat(Applier.passedThePodChecks(403, "pods \"dev-redis-check\" is forbidden: exceeded quota: compute, requested: "
                + "limits.memory=600Mi, used: limits.memory=1800Mi, limited: limits.memory=2Gi", pod)).isTrue();
        assertThat(Applier.passedThePodChecks(400, "admission webhook \"pods.policy.example.com\" does not support dry run", pod))
                .isFalse();
        assertThat(Applier.passedThePodChecks(403, "pods is forbidden: User \"system:serviceaccount:ops:tbmq-operator\" cannot "
                + "create resource \"pods\" in API group \"\" in the namespace \"iot\"", pod)).as("a role without create pods").isFalse();
        assertThat(Applier.passedThePodChecks(403, "admission webhook \"quota.example.com\" denied the request: exceeded quota: x",
                pod)).isFalse();
    }

    @Test
    void aRefusalOfTheRunningTemplateTooIsSaidAfterTheSpecsAndItsReasonOnlyWhenItIsAnother() {
        Applier.PodsRefused spec = new Applier.PodsRefused("c-redis", "maximum cpu usage per Container is 1, but limit is 2");
        assertThat(spec.alongside(new Applier.PodsRefused("c-redis", "maximum cpu usage per Container is 1, but limit is 2")).getMessage())
                .isEqualTo(spec.getMessage() + "; the running StatefulSet's pods are refused too, for the same reason, so its outdated"
                        + " pods are not replaced either");
        assertThat(spec.alongside(new Applier.PodsRefused("c-redis", "violates PodSecurity \"restricted:latest\"")).getMessage())
                .isEqualTo(spec.getMessage() + "; the running StatefulSet's pods are refused too, so its outdated pods are not replaced"
                        + " either: violates PodSecurity \"restricted:latest\"");
        ComponentStatus.Notice kept = new ComponentStatus.Notice("RedisStorageClassKept", "Kept", "the class stays");
        assertThat(spec.with(java.util.List.of(kept)).alongside(new Applier.PodsRefused("c-redis", "x")).notices())
                .as("what the spec's pass found is still reported").containsExactly(kept);
        IllegalStateException failed = new IllegalStateException("pods \"c-redis-2\" is forbidden: cannot delete");
        Applier.PodsRefused both = spec.with(java.util.List.of(kept)).whileLookingAfter(failed);
        assertThat(both.getMessage()).startsWith(spec.getMessage())
                .endsWith("; looking after the running pods failed and is tried again: pods \"c-redis-2\" is forbidden: cannot delete");
        assertThat(both.getSuppressed()).containsExactly(failed);
        assertThat(both.notices()).containsExactly(kept);
    }
}
