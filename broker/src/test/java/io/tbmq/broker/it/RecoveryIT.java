package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.awaitility.Awaitility;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.RedisNode;

/**
 * The durability promise on its own stack: a publisher and a persistent subscriber keep running
 * while Redis restarts and while the broker is killed with SIGKILL and restarted; every message the
 * broker acknowledged arrives, in order, duplicates only with DUP set.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RecoveryIT {
    private static ItStack it;
    private static BrokerNode broker;

    @BeforeAll
    static void start() {
        it = ItStack.isolated("recovery-stack", java.util.Map.of("quarkus.log.category.\"io.tbmq\".level", "DEBUG"));
        broker = it.broker();
    }

    @AfterAll
    static void stop() {
        it.close();
    }

    private static void report(String scenario, String client, ContinuousPair.Result r) {
        System.out.printf("%s: acked %d, lost %d, duplicates %d (without DUP %d), reordered %d, longest pause %d ms%n", scenario,
                r.acked(), r.lost(), r.duplicates(), r.duplicatesWithoutDup(), r.reordered(), r.longestPauseMillis());
        if (r.lost() > 0) {
            int port = it.stack().redis().orElseThrow().port();
            System.out.printf("  redis: zcard %s last %s ready %s%n",
                    io.tbmq.localstack.RedisCli.command(port, "ZCARD {" + client + "}_messages").trim(),
                    io.tbmq.localstack.RedisCli.command(port, "HGETALL {" + client + "}_last_packet_id").trim().replace("\r\n", " "),
                    broker.get("/q/health/ready").replace("\n", " "));
        }
    }

    @Test
    @Order(1)
    void redisRestartLosesNothingAcknowledged() throws Exception {
        ContinuousPair pair = new ContinuousPair(broker.mqttPort(), "redis-restart", 50).start();
        ContinuousPair.awaitSeconds(3);
        RedisNode redis = it.stack().redis().orElseThrow();
        redis.stop();
        ContinuousPair.awaitSeconds(3);
        redis.start(Duration.ofSeconds(30));
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> broker.status("/q/health/ready") == 200);
        ContinuousPair.awaitSeconds(3);
        ContinuousPair.Result r = pair.finish(30_000);
        report("Redis restart", "redis-restart-sub", r);
        assertThat(r.acked()).as("the pair ran through the fault").isGreaterThanOrEqualTo(ContinuousPair.MIN_ACKED);
        assertThat(r.lost()).isZero();
        assertThat(r.duplicatesWithoutDup()).isZero();
        assertThat(r.reordered()).isZero();
    }

    @Test
    @Order(2)
    void brokerKilledWithSigkillLosesNothingAcknowledged() throws Exception {
        ContinuousPair pair = new ContinuousPair(broker.mqttPort(), "broker-kill", 50).start();
        ContinuousPair.awaitSeconds(3);
        broker.kill();
        broker.start(Duration.ofSeconds(90));
        ContinuousPair.awaitSeconds(5);
        ContinuousPair.Result r = pair.finish(30_000);
        report("broker kill -9", "broker-kill-sub", r);
        assertThat(r.acked()).as("the pair ran through the fault").isGreaterThanOrEqualTo(ContinuousPair.MIN_ACKED);
        assertThat(r.lost()).isZero();
        assertThat(r.duplicatesWithoutDup()).isZero();
        assertThat(r.reordered()).isZero();
    }

    /**
     * Under Kubernetes the operator gives each broker its pod's UID: a container the kubelet restarts in
     * its pod after a crash starts while its predecessor's last heartbeat is fresh, without waiting for
     * it to age, since a pod's container restarts only after the previous one exited.
     */
    @Test
    @Order(3)
    void aBrokerRestartedInItsPodAfterACrashDoesNotWaitForItsPredecessor() throws Exception {
        broker.config("tbmq.cluster.pod-uid", "0c4e5b9a-1f2d-4c3b-9a8e-7d6c5b4a3f21");
        broker.kill();
        long before = java.nio.file.Files.size(broker.log());
        broker.start(Duration.ofSeconds(90));
        String first = logSince(before);
        assertThat(first).as("restarted in a pod after a process outside any").contains("listening").contains("for another before joining")
                .doesNotContain("previous container");

        ContinuousPair pair = new ContinuousPair(broker.mqttPort(), "pod-restart", 50).start();
        ContinuousPair.awaitSeconds(3);
        broker.kill();
        before = java.nio.file.Files.size(broker.log());
        broker.start(Duration.ofSeconds(90));
        String second = logSince(before);
        assertThat(second).contains("came from this pod's previous container, which has exited: joining without waiting")
                .doesNotContain("for another before joining");
        ContinuousPair.awaitSeconds(5);
        ContinuousPair.Result r = pair.finish(30_000);
        report("broker kill -9, restarted in its pod", "pod-restart-sub", r);
        assertThat(r.acked()).as("the pair ran through the fault").isGreaterThanOrEqualTo(ContinuousPair.MIN_ACKED);
        assertThat(r.lost()).isZero();
        assertThat(r.duplicatesWithoutDup()).isZero();
        assertThat(r.reordered()).isZero();
    }

    /** What the broker logged from byte {@code offset} of its log on. */
    private static String logSince(long offset) throws java.io.IOException {
        byte[] log = java.nio.file.Files.readAllBytes(broker.log());
        return new String(log, (int) offset, log.length - (int) offset, java.nio.charset.StandardCharsets.UTF_8);
    }
}
