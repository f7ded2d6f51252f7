package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MachineLoadTest {
    @Test
    void redisPodsCountAsOneAndADeploymentsPodByItsDeployment() {
        assertThat(MachineLoad.group("dev-redis-7")).isEqualTo("dev-redis (every pod)");
        assertThat(MachineLoad.group("dev-redis-0")).isEqualTo("dev-redis (every pod)");
        assertThat(MachineLoad.group("tbmq-operator-6bb8996889-c4fds")).isEqualTo("tbmq-operator");
        assertThat(MachineLoad.group("dev-broker-1")).isEqualTo("dev-broker-1");
        assertThat(MachineLoad.group("dev-kafka-kafka-0")).isEqualTo("dev-kafka-kafka-0");
    }
}
