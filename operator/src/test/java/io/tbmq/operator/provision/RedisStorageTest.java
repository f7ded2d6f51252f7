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
        RedisStorage.Decision decision = new RedisStorage(null, null).decide(c, names, running);
        assertThat(decision.volumeSize()).isEqualTo("8Gi");
        assertThat(decision.notice()).isNull();
    }
}
