package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tbmq.operator.desired.Names;

class RedisProvisionerTest {
    static final Names NAMES = new Names("dev", "iot");

    @Test
    void aStatefulSetDeletedAroundItsPodsIsWrittenAgainWithAsManyAsTheHighestOrphanLeft() {
        // redis-1 was deleted after the orphaning (a node drained): redis-2 still holds slots, so 3 pods are kept.
        assertThat(RedisProvisioner.orphanedPods(List.of(pod("dev-redis-0", false, false), pod("dev-redis-2", false, false)), NAMES))
                .isEqualTo(3);
    }

    @Test
    void podsStillOwnedGoingAwayOrNotTheClustersAreNotCounted() {
        assertThat(RedisProvisioner.orphanedPods(List.of(), NAMES)).as("a new cluster").isZero();
        assertThat(RedisProvisioner.orphanedPods(List.of(pod("dev-redis-4", true, false)), NAMES)).as("owned by a StatefulSet").isZero();
        assertThat(RedisProvisioner.orphanedPods(List.of(pod("dev-redis-4", false, true)), NAMES)).as("being deleted").isZero();
        assertThat(RedisProvisioner.orphanedPods(List.of(pod("dev-redis-check", false, false), pod("dev-redis-", false, false),
                pod("dev-redisx-7", false, false)), NAMES)).as("not an ordinal of dev-redis").isZero();
        assertThat(RedisProvisioner.orphanedPods(List.of(pod("dev-redis-1", false, false), pod("dev-redis-5", true, false)), NAMES))
                .isEqualTo(2);
    }

    private static Pod pod(String name, boolean owned, boolean deleting) {
        var builder = new PodBuilder().withNewMetadata().withName(name).withNamespace("iot")
                .withDeletionTimestamp(deleting ? "2026-12-07T12:00:00Z" : null).endMetadata();
        if (owned) {
            builder.editMetadata().addNewOwnerReference().withKind("StatefulSet").withName("dev-redis").withController(true)
                    .endOwnerReference().endMetadata();
        }
        return builder.build();
    }
}
