package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.RedisCluster;
import io.tbmq.localstack.RedisNode;

/**
 * The durability promise on a Redis Cluster: a master restarts under a running publisher and
 * persistent subscriber; every message the broker acknowledged arrives, in order, duplicates only
 * with DUP set. On its own stack (it stops a Redis master).
 */
class ClusterRecoveryIT {
    private static ItStack it;
    private static BrokerNode broker;

    @BeforeAll
    static void start() {
        it = ItStack.isolatedCluster("cluster-recovery-stack", Map.of());
        broker = it.broker();
    }

    @AfterAll
    static void stop() {
        it.close();
    }

    @Test
    void aMasterRestartLosesNothingAcknowledged() throws Exception {
        ContinuousPair pair = new ContinuousPair(broker.mqttPort(), "master-restart", 50).start();
        ContinuousPair.awaitSeconds(3);
        RedisCluster cluster = it.stack().redisCluster().orElseThrow();
        RedisNode master = cluster.nodes().get(1);
        master.stop();
        ContinuousPair.awaitSeconds(3);
        master.start(Duration.ofSeconds(30));
        cluster.awaitClusterOk(Duration.ofSeconds(30));
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> broker.status("/q/health/ready") == 200);
        ContinuousPair.awaitSeconds(3);
        ContinuousPair.Result r = pair.finish(30_000);
        System.out.printf("Redis Cluster master restart: acked %d, lost %d, duplicates %d (without DUP %d), reordered %d, "
                + "longest pause %d ms%n", r.acked(), r.lost(), r.duplicates(), r.duplicatesWithoutDup(), r.reordered(),
                r.longestPauseMillis());
        assertThat(r.acked()).as("the pair ran through the fault").isGreaterThanOrEqualTo(ContinuousPair.MIN_ACKED);
        assertThat(r.lost()).isZero();
        assertThat(r.duplicatesWithoutDup()).isZero();
        assertThat(r.reordered()).isZero();
    }
}
