package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ApplierTest {

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
}
