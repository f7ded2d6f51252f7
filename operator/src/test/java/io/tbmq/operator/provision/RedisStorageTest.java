package io.tbmq.operator.provision;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.operator.api.StorageSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.RedisModel;
import io.tbmq.operator.desired.Samples;

class RedisStorageTest {

    @Test
    void aStorageBlockWithoutASizeKeepsTheRunningDefaultSizedVolumes() {
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Names names = new Names(c.getMetadata().getName(), "iot");
        var running = RedisModel.statefulSet(c, names, 3);
        c.getSpec().getRedis().setStorage(Serialization.unmarshal("{\"deleteClaim\": true}", StorageSpec.class));

        // Same size as the volumes: nothing to expand, so no API call (no client here) and no notice.
        RedisStorage.Decision decision = new RedisStorage(name -> null, claim -> null).decide(c, names, running, 0, 3);
        assertThat(decision.volumes().size()).isEqualTo("8Gi");
        assertThat(decision.notices()).isEmpty();
    }

    @Test
    void anotherStorageClassKeepsTheVolumesClassAndSaysSoWhileTheRestIsWritten() {
        // A storage block added later passes the CRD's rules (nothing to compare with), and a StatefulSet
        // refuses a new volume class: written as asked, every reconcile would fail from here on.
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Names names = new Names(c.getMetadata().getName(), "iot");
        var running = RedisModel.statefulSet(c, names, 3);
        c.getSpec().getRedis().setStorage(Serialization.unmarshal("{\"storageClass\": \"fast\"}", StorageSpec.class));

        RedisStorage storage = new RedisStorage(name -> name == null || name.equals("standard") ? standard() : null, claim -> null);
        RedisStorage.Decision decision = storage.decide(c, names, running, 0, 3);
        assertThat(decision.volumes()).isEqualTo(new RedisModel.Volumes("8Gi", null));
        assertThat(decision.notices()).singleElement().satisfies(n -> {
            assertThat(n.type()).isEqualTo(RedisStorage.CLASS_KEPT);
            assertThat(n.message()).startsWith("spec.redis.storage.storageClass 'fast' is not the volumes' (the cluster's default)");
        });
        assertThat(RedisModel.statefulSet(c, names, 3, decision.volumes()).getSpec().getVolumeClaimTemplates().get(0).getSpec()
                .getStorageClassName()).isNull();

        // A new cluster gets the class it asks for.
        assertThat(storage.decide(c, names, null, 0, 3).volumes()).isEqualTo(new RedisModel.Volumes("8Gi", "fast"));

        // Naming the default class the volumes were made with, by its name, changes nothing and is no notice.
        c.getSpec().getRedis().getStorage().setStorageClass("standard");
        assertThat(storage.decide(c, names, running, 0, 3).notices()).isEmpty();
    }

    @Test
    void withoutAStatefulSetButWithItsVolumesTheirSizeAndClassAreKept() {
        // The StatefulSet was deleted around its pods to expand their volumes, and the operator stopped before writing
        // it again: written from the spec, it would take the spec's class over the volumes' and lose the notice.
        TbmqCluster c = Samples.load("tbmq-p2p-200k.yaml", "iot");
        Names names = new Names(c.getMetadata().getName(), "iot");
        c.getSpec().getRedis().setStorage(Serialization.unmarshal("{\"size\": \"32Gi\", \"storageClass\": \"fast\"}",
                StorageSpec.class));
        var expanded = new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder().withNewMetadata()
                .withName("data-" + names.redisPod(0)).endMetadata().withNewSpec().withStorageClassName("standard")
                .withNewResources().addToRequests("storage", new io.fabric8.kubernetes.api.model.Quantity("16Gi")).endResources()
                .endSpec().build();
        RedisStorage storage = new RedisStorage(name -> name == null || name.equals("standard") ? standard() : null,
                claim -> claim.equals("data-" + names.redisPod(0)) ? expanded : null);

        RedisStorage.Decision decision = storage.decide(c, names, null, 3, 3);
        assertThat(decision.volumes()).isEqualTo(new RedisModel.Volumes("16Gi", "standard"));
        assertThat(decision.notices()).extracting(n -> n.type()).containsExactly(RedisStorage.CLASS_KEPT);

        // A new cluster: the spec as it is, even where an earlier cluster of its name left volumes (its other volumes
        // are still to be made, and a StatefulSet's volume template cannot change later).
        assertThat(storage.decide(c, names, null, 0, 3).volumes()).isEqualTo(new RedisModel.Volumes("32Gi", "fast"));

        // A volume on its way out (its cluster deleted, a new one of the name made at once) says nothing either.
        expanded.getMetadata().setDeletionTimestamp("2026-12-07T16:00:00Z");
        assertThat(storage.decide(c, names, null, 3, 3).volumes()).isEqualTo(new RedisModel.Volumes("32Gi", "fast"));
    }

    private static io.fabric8.kubernetes.api.model.storage.StorageClass standard() {
        return new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder().withNewMetadata().withName("standard")
                .addToAnnotations(RedisStorage.DEFAULT_CLASS, "true").endMetadata().build();
    }
}
