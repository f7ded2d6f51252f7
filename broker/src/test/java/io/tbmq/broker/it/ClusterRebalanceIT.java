package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.tbmq.localstack.BrokerNode;

/**
 * Clean consumer-group rebalances under continuous traffic at QoS 0, 1 and 2: nodes joining one
 * after another, nodes leaving on purpose, partitions added to the routing topics. A clean
 * rebalance replays nothing: no QoS 0 message arrives twice, no QoS 1 or 2 message arrives twice
 * without DUP, and nothing acknowledged is lost (a clean-clone CI run once saw a QoS 0 subscriber
 * get m0..m6 and then m0..m19 again while the nodes' groups settled).
 */
class ClusterRebalanceIT {
    private static final Map<String, String> CLUSTER = Map.of("tbmq.cluster.node-timeout", "5s",
            "tbmq.cluster.heartbeat-interval", "1s", "tbmq.kafka.msg-all-partitions", "6",
            "tbmq.persistence.persisted-partitions", "6", "tbmq.shutdown.grace", "3s",
            // Partitions added by the test are used within a couple of seconds.
            "tbmq.kafka.metadata-max-age", "2s",
            // Seconds between periodic commits: a hand-over that relied on them would replay
            // seconds of messages, which no pair could miss.
            "tbmq.kafka.consumer-commit-interval", "5s");
    private ItStack it;
    private final List<ContinuousPair> pairs = new ArrayList<>();

    @AfterEach
    void stop() {
        if (it != null) {
            it.close();
        }
    }

    @Test
    void nodesJoiningOneAfterAnotherAndLeavingOnPurposeReplayNothing() throws Exception {
        it = ItStack.isolatedCluster("cluster-rebalance-it", CLUSTER);
        BrokerNode a = it.broker();
        // Pairs on the first node: every later node takes routing and persisted partitions from it.
        for (int qos = 0; qos <= 2; qos++) {
            pairs.add(new ContinuousPair(List.of(a.mqttPort()), List.of(a.mqttPort()), "local-q" + qos, 20, qos).start());
        }
        ContinuousPair.awaitSeconds(3);
        BrokerNode b = it.startBroker("node-b", CLUSTER);
        // Pairs across nodes: copies travel through the downlink topics too.
        for (int qos = 0; qos <= 2; qos++) {
            pairs.add(new ContinuousPair(List.of(b.mqttPort(), a.mqttPort()), List.of(a.mqttPort(), b.mqttPort()), "across-q" + qos,
                    20, qos).start());
        }
        ContinuousPair.awaitSeconds(4);
        BrokerNode c = it.startBroker("node-c", CLUSTER);
        ContinuousPair.awaitSeconds(4);
        c.stop(Duration.ofSeconds(30));
        ContinuousPair.awaitSeconds(4);
        b.stop(Duration.ofSeconds(30));
        ContinuousPair.awaitSeconds(4);
        assertNothingReplayed("nodes b and c join, then leave on purpose", true);
    }

    @Test
    void partitionsAddedToTheRoutingTopicsReplayNothing() throws Exception {
        // The producers' metadata as users have it (30 s): the nodes follow tbmq.msg.all's count by asking Kafka.
        Map<String, String> config = new java.util.HashMap<>(CLUSTER);
        config.remove("tbmq.kafka.metadata-max-age");
        // About 1 s to notice, 2 s for every node to move, up to the 5 s commit interval: a slow CI run keeps a margin.
        config.put("tbmq.kafka.partition-move-wait", "20s");
        it = ItStack.isolatedCluster("cluster-partitions-it", config);
        BrokerNode a = it.broker();
        BrokerNode b = it.startBroker("node-b", config);
        for (int qos = 0; qos <= 2; qos++) {
            pairs.add(new ContinuousPair(List.of(a.mqttPort()), List.of(b.mqttPort()), "grow-q" + qos, 20, qos).start());
        }
        ContinuousPair.awaitSeconds(3);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, it.stack().kafka().bootstrapServers());
        try (Admin admin = Admin.create(props)) {
            // What the operator does when a scale edit raises the partition counts.
            admin.createPartitions(Map.of("tbmq.msg.all", NewPartitions.increaseTo(9), "tbmq.msg.persisted",
                    NewPartitions.increaseTo(9))).all().get();
        }
        ContinuousPair.awaitSeconds(12);
        // A topic that moves to a new partition waits for its old partition to be routed: its order holds.
        assertNothingReplayed("6 -> 9 partitions of tbmq.msg.all and tbmq.msg.persisted", true);
        for (BrokerNode node : List.of(a, b)) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
                String metrics = node.get("/q/metrics");
                return !metrics.contains("tbmq_partition_moves_total{result=\"in-order\"} 0.0")
                        || !metrics.contains("tbmq_partition_moves_total{result=\"bounded\"} 0.0");
            });
            assertThat(node.get("/q/metrics")).as("%s followed the growth in order", node)
                    .contains("tbmq_partition_moves_total{result=\"in-order\"} 1.0")
                    .contains("tbmq_partition_moves_total{result=\"bounded\"} 0.0");
        }
    }

    @Test
    void aRoutingNodeKilledReplaysOnlyWithDup() throws Exception {
        it = ItStack.isolatedCluster("cluster-crash-replay-it", CLUSTER);
        BrokerNode a = it.broker();
        BrokerNode b = it.startBroker("node-b", CLUSTER);
        List<Integer> onA = List.of(a.mqttPort());
        // Subscribers whose copies are not recognised by a store when routed again: a crash's replay reaches them.
        for (ContinuousPair.SubscriberKind kind : List.of(ContinuousPair.SubscriberKind.MEMORY,
                ContinuousPair.SubscriberKind.APPLICATION, ContinuousPair.SubscriberKind.DEVICE)) {
            for (int qos = 1; qos <= 2; qos++) {
                pairs.add(new ContinuousPair(onA, onA, "crash-" + kind.name().toLowerCase() + "-q" + qos, 20, qos).subscriber(kind)
                        .start());
            }
        }
        // b routes about half of the partitions and commits every 5 s: its kill leaves seconds to replay.
        ContinuousPair.awaitSeconds(6);
        b.kill();
        ContinuousPair.awaitSeconds(16);
        int duplicates = 0;
        for (ContinuousPair pair : pairs) {
            ContinuousPair.Result r = pair.finish(30_000);
            System.out.printf("routing node killed, %s: acked %d, lost %d, duplicates %d (without DUP %d), reordered %d, longest pause %d ms%n",
                    pair.name(), r.acked(), r.lost(), r.duplicates(), r.duplicatesWithoutDup(), r.reordered(), r.longestPauseMillis());
            assertThat(r.lost()).as("%s: acknowledged but never delivered", pair.name()).isZero();
            assertThat(r.duplicatesWithoutDup()).as("%s: redelivered without DUP", pair.name()).isZero();
            duplicates += r.duplicates();
        }
        System.out.printf("routing node killed: %d redelivered copies, all with DUP%n", duplicates);
        assertThat(java.nio.file.Files.readString(a.log())).as("the survivor knew it was replaying")
                .contains("without a clean hand-over");
    }

    private void assertNothingReplayed(String scenario, boolean inOrder) throws Exception {
        for (ContinuousPair pair : pairs) {
            ContinuousPair.Result r = pair.finish(30_000);
            System.out.printf("%s, %s: acked %d, lost %d, duplicates %d (without DUP %d), reordered %d, longest pause %d ms%n",
                    scenario, pair.name(), r.acked(), r.lost(), r.duplicates(), r.duplicatesWithoutDup(), r.reordered(),
                    r.longestPauseMillis());
            assertThat(r.acked()).as("%s kept publishing", pair.name()).isGreaterThanOrEqualTo(ContinuousPair.MIN_ACKED);
            if (pair.qos() == 0) {
                assertThat(r.duplicates()).as("%s: a QoS 0 message delivered twice", pair.name()).isZero();
            } else {
                assertThat(r.lost()).as("%s: acknowledged but never delivered", pair.name()).isZero();
                assertThat(r.duplicatesWithoutDup()).as("%s: redelivered without DUP", pair.name()).isZero();
            }
            if (inOrder) {
                assertThat(r.reordered()).as("%s: out of order", pair.name()).isZero();
            }
        }
    }
}
