package io.tbmq.operator.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqClusterSpec;

class ReachabilityTest {

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void externalAddressesThatDoNotAnswerAreNamedByField() throws Exception {
        TbmqClusterSpec spec = new TbmqClusterSpec();
        spec.getKafka().setMode(Mode.EXTERNAL);
        spec.getRedis().setMode(Mode.EXTERNAL);
        try (ServerSocket redis = new ServerSocket(0)) {
            spec.getKafka().setBootstrapServers("127.0.0.1:" + closedPort() + ",127.0.0.1:" + closedPort());
            spec.getRedis().setNodes(List.of("127.0.0.1:" + closedPort(), "127.0.0.1:" + redis.getLocalPort()));
            assertThat(Reachability.check(spec)).extracting(FieldError::field).containsExactly("spec.kafka.bootstrapServers");
        }
    }

    @Test
    void managedComponentsAreNotChecked() {
        assertThat(Reachability.check(new TbmqClusterSpec())).isEmpty();
    }
}
