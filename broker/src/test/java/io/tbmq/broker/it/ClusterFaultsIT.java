package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import io.tbmq.localstack.BrokerNode;

/**
 * The cluster's promise under failure: publishers and persistent subscribers spread over three
 * nodes keep going while a node is killed, or while every node restarts in turn; afterwards every
 * PUBACKed message was delivered, in order per pair, duplicates only with DUP. The longest pause
 * in delivery is printed (docs/reliability figures).
 */
class ClusterFaultsIT {
    private static final Map<String, String> CLUSTER = Map.of("tbmq.cluster.node-timeout", "5s",
            "tbmq.cluster.heartbeat-interval", "1s", "tbmq.kafka.msg-all-partitions", "6",
            "tbmq.persistence.persisted-partitions", "6", "tbmq.shutdown.grace", "3s",
            // Drops and takeovers of the cluster layer and of the persisted pipeline, for the post-mortem of a failed run.
            "quarkus.log.category.\"io.tbmq.broker.cluster\".level", "DEBUG",
            "quarkus.log.category.\"io.tbmq.broker.persistence.PersistedHandler\".level", "DEBUG",
            "quarkus.log.category.\"io.tbmq.broker.routing\".level", "DEBUG");
    /** Log lines of a node that tell what happened to a message that went missing. */
    private static final java.util.regex.Pattern TELLING = java.util.regex.Pattern.compile(
            "WARN|ERROR|dropped|draining|started as process|stopped|now reads|took over|taken over|adopt|not processed|could not");
    private ItStack it;
    private final List<BrokerNode> nodes = new ArrayList<>();

    @BeforeEach
    void start(TestInfo test) {
        // A directory per test: the logs of a failed one stay for its post-mortem.
        it = ItStack.isolatedCluster("cluster-faults-it/" + test.getTestMethod().orElseThrow().getName(), CLUSTER);
        nodes.add(it.broker());
        nodes.add(it.startBroker("node-b", CLUSTER));
        nodes.add(it.startBroker("node-c", CLUSTER));
    }

    @AfterEach
    void stop() {
        it.close();
    }

    /** Pair i publishes through node i and subscribes through node i+1; each falls over to the next node. */
    private List<ContinuousPair> pairs(String scenario) throws Exception {
        List<ContinuousPair> pairs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            pairs.add(new ContinuousPair(ports(i), ports(i + 1), scenario + "-" + i, 20).start());
        }
        return pairs;
    }

    private List<Integer> ports(int first) {
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < nodes.size(); k++) {
            out.add(nodes.get((first + k) % nodes.size()).mqttPort());
        }
        return out;
    }

    @Test
    void killingANodeLosesNoAcknowledgedMessage() throws Exception {
        List<ContinuousPair> pairs = pairs("kill");
        ContinuousPair.awaitSeconds(4);
        nodes.get(2).kill();
        ContinuousPair.awaitSeconds(12);
        nodes.get(2).start(Duration.ofMinutes(2));
        ContinuousPair.awaitSeconds(4);
        assertEveryAcknowledgedMessageArrived("kill -9 of one node of three", pairs);
    }

    @Test
    void killingEveryNodeInTurnLosesNoAcknowledgedMessage() throws Exception {
        List<ContinuousPair> pairs = pairs("kill-each");
        ContinuousPair.awaitSeconds(4);
        for (BrokerNode node : nodes) {
            node.kill();
            ContinuousPair.awaitSeconds(6);
            node.start(Duration.ofMinutes(2));
            ContinuousPair.awaitSeconds(4);
        }
        assertEveryAcknowledgedMessageArrived("kill -9 of every node in turn", pairs);
    }

    @Test
    void aRollingRestartOfEveryNodeLosesNoAcknowledgedMessage() throws Exception {
        List<ContinuousPair> pairs = pairs("roll");
        ContinuousPair.awaitSeconds(4);
        for (BrokerNode node : nodes) {
            node.restart(Duration.ofMinutes(2));
            ContinuousPair.awaitSeconds(3);
        }
        assertEveryAcknowledgedMessageArrived("rolling restart of three nodes", pairs);
    }

    private void assertEveryAcknowledgedMessageArrived(String scenario, List<ContinuousPair> pairs) throws Exception {
        long longest = 0;
        // Every pair stops before any assertion: a failed one must not leave the others publishing into the next test.
        List<ContinuousPair.Result> results = new ArrayList<>();
        for (ContinuousPair pair : pairs) {
            results.add(pair.finish(60_000));
        }
        if (results.stream().anyMatch(r -> r.lost() > 0)) {
            printTellingLines();
        }
        for (ContinuousPair.Result r : results) {
            System.out.printf("%s: acked %d, lost %d, duplicates %d (without DUP %d), reordered %d, longest pause %d ms%n",
                    scenario, r.acked(), r.lost(), r.duplicates(), r.duplicatesWithoutDup(), r.reordered(), r.longestPauseMillis());
            assertThat(r.acked()).as("the publisher kept going").isGreaterThanOrEqualTo(ContinuousPair.MIN_ACKED);
            assertThat(r.lost()).as("acknowledged but never delivered").isZero();
            assertThat(r.duplicatesWithoutDup()).as("redelivered without DUP").isZero();
            assertThat(r.reordered()).as("out of order").isZero();
            longest = Math.max(longest, r.longestPauseMillis());
        }
        System.out.printf("%s: longest delivery pause %d ms%n", scenario, longest);
    }

    /** CI shows only what a test prints: a loss comes with what each node logged about drops and hand-overs. */
    private void printTellingLines() throws java.io.IOException {
        for (BrokerNode node : nodes) {
            List<String> lines = java.nio.file.Files.readAllLines(node.log()).stream().filter(l -> TELLING.matcher(l).find())
                    .toList();
            System.out.printf("--- %s: %d telling lines of %s (last 150)%n", node.nodeId(), lines.size(), node.log());
            lines.subList(Math.max(0, lines.size() - 150), lines.size()).forEach(l -> System.out.println(l.length() > 300
                    ? l.substring(0, 300) : l));
        }
    }
}
