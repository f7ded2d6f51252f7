package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/** Two clusters given the same Kafka topics: told apart by the cluster their heartbeats name. */
class ForeignClusterTest {
    private static final Duration NODE_TIMEOUT = Duration.ofMillis(1_000);
    private static final String TOPIC = "tbmq.cluster.nodes";

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static NodeLiveness liveness(String cluster) {
        return new NodeLiveness("a-broker-0", "me", NODE_TIMEOUT, Duration.ZERO, cluster);
    }

    @Test
    void aNodeThatReadsARecentHeartbeatOfAnotherClusterDoesNotStart() {
        NodeLiveness liveness = liveness("plant-1/tbmq");
        liveness.record(bytes("b-broker-0"), bytes(System.currentTimeMillis() + " incarnation 77aa cluster plant-2/tbmq"));
        liveness.caughtUp();

        assertThatThrownBy(() -> new ForeignCluster("plant-1/tbmq", TOPIC, liveness).checkBeforeJoining())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("node b-broker-0 of cluster plant-2/tbmq sent a heartbeat to tbmq.cluster.nodes")
                .hasMessageContaining("Kafka topics of this cluster (plant-1/tbmq), so this node does not start")
                .hasMessageContaining("tbmq.kafka.topic-prefix");
    }

    @Test
    void nodesOfItsOwnClusterAnUnnamedOneOrOneLongGoneDoNotStopIt() {
        NodeLiveness liveness = liveness("plant-1/tbmq");
        long now = System.currentTimeMillis();
        liveness.record(bytes("a-broker-1"), bytes(now + " incarnation 01 cluster plant-1/tbmq"));
        liveness.record(bytes("old-broker"), bytes(now + " incarnation 02"));
        liveness.record(bytes("b-broker-0"), bytes((now - 60_000) + " incarnation 03 cluster plant-2/tbmq"));
        liveness.record(bytes("b-broker-1"), bytes(now + " incarnation 04 cluster plant-2/tbmq"));
        liveness.record(bytes("b-broker-1"), null); // it left since
        liveness.caughtUp();

        assertThatCode(() -> new ForeignCluster("plant-1/tbmq", TOPIC, liveness).checkBeforeJoining()).doesNotThrowAnyException();
        assertThat(liveness.foreignHeartbeats()).as("none read live").isZero();
    }

    @Test
    void anotherClusterWithTheSameNodeIdsIsNotHiddenByThisOnesHeartbeats() {
        // Two TbmqClusters of one name in two namespaces: both send tbmq-broker-0.
        NodeLiveness liveness = new NodeLiveness("tbmq-broker-1", "me", NODE_TIMEOUT, Duration.ZERO, "plant-1/tbmq");
        long now = System.currentTimeMillis();
        liveness.record(bytes("tbmq-broker-0"), bytes(now + " incarnation 01 cluster plant-2/tbmq"));
        liveness.record(bytes("tbmq-broker-0"), bytes(now + " incarnation 02 cluster plant-1/tbmq"));
        liveness.caughtUp();

        assertThatThrownBy(() -> new ForeignCluster("plant-1/tbmq", TOPIC, liveness).checkBeforeJoining())
                .hasMessageContaining("node tbmq-broker-0 of cluster plant-2/tbmq");
    }

    @Test
    void anUnnamedClusterChecksNothing() {
        NodeLiveness liveness = liveness(null);
        liveness.record(bytes("b-broker-0"), bytes(System.currentTimeMillis() + " incarnation 77aa cluster plant-2/tbmq"));
        liveness.caughtUp();

        assertThatCode(() -> new ForeignCluster(null, TOPIC, liveness).checkBeforeJoining()).doesNotThrowAnyException();
        assertThat(liveness.foreignNode(System.currentTimeMillis())).isEmpty();
    }

    @Test
    void aRunningNodeCountsAnotherClustersHeartbeatsAndKeepsCountingItsNodesAlive() throws Exception {
        NodeLiveness liveness = liveness("plant-1/tbmq");
        liveness.caughtUp();

        for (int i = 0; i < 3; i++) {
            liveness.record(bytes("b-broker-0"), bytes(System.currentTimeMillis() + " incarnation 77aa cluster plant-2/tbmq"));
        }

        assertThat(liveness.foreignHeartbeats()).isEqualTo(3);
        assertThat(liveness.foreignNode(System.currentTimeMillis())).hasValueSatisfying(h -> {
            assertThat(h.node()).isEqualTo("b-broker-0");
            assertThat(h.heartbeat().cluster()).isEqualTo("plant-2/tbmq");
        });
        // Taken for dead, its clients' Wills would go out and its sessions be adopted.
        assertThat(liveness.aliveNodes()).contains("b-broker-0");
        Thread.sleep(NODE_TIMEOUT.toMillis() + 100);
        assertThat(liveness.foreignNode(System.currentTimeMillis())).as("silent for a node timeout").isEmpty();
    }
}
