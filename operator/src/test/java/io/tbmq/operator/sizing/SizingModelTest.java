package io.tbmq.operator.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqClusterSpec;
import io.tbmq.operator.api.Workload;

class SizingModelTest {

    static TbmqClusterSpec target(long msgPerSec) {
        TbmqClusterSpec spec = new TbmqClusterSpec();
        spec.setTargetThroughput(msgPerSec);
        return spec;
    }

    /** The TBMQ paper's Tables 4 and 5, row by row. */
    @ParameterizedTest(name = "{0} msg/s")
    @CsvSource({
            "200000,  1, 3,  3, 12, 150",
            "400000,  2, 5,  3, 12, 250",
            "600000,  3, 7,  3, 12, 300",
            "800000,  4, 9,  3, 16, 400",
            "1000000, 5, 11, 5, 20, 500"})
    void reproducesThePapersTables(long target, int brokers, int redis, int kafka, int partitions, int batch) {
        Plan plan = SizingModel.plan(target(target));
        assertThat(plan.brokers().value()).isEqualTo(brokers);
        assertThat(plan.brokerCpuMillis().value()).isEqualTo(16_000);
        assertThat(plan.brokerMemoryMib().value()).isEqualTo(32 * 1024);
        assertThat(plan.redisMasters().value()).isEqualTo(redis);
        assertThat(plan.kafkaBrokers().value()).isEqualTo(kafka);
        assertThat(plan.partitions().value()).isEqualTo(partitions);
        assertThat(plan.lettuceBatchSize().value()).isEqualTo(batch);
        assertThat(plan.replicationFactor().value()).isEqualTo(3);
        assertThat(plan.brokers().rule()).contains("Table 4");
        assertThat(plan.lettuceBatchSize().rule()).contains("Table 5");
    }

    @Test
    void betweenRowsNothingIsBelowTheNextRowDown() {
        // Every target from 1 to 1.6M in steps of 10k: each number is at least what the row below
        // the target needs, so a target between rows never gets less than the smaller row.
        Plan previous = null;
        for (long t = 10_000; t <= 1_600_000; t += 10_000) {
            Plan plan = SizingModel.plan(target(t));
            if (previous != null) {
                assertNotSmaller(previous, plan, t);
            }
            previous = plan;
        }
    }

    @Test
    void betweenRowsTheNextRowUpIsUsed() {
        Plan between = SizingModel.plan(target(610_000));
        Plan row = SizingModel.plan(target(800_000));
        assertThat(between.brokers().value()).isEqualTo(row.brokers().value());
        assertThat(between.redisMasters().value()).isEqualTo(row.redisMasters().value());
        assertThat(between.partitions().value()).isEqualTo(row.partitions().value());
        assertThat(between.lettuceBatchSize().value()).isEqualTo(row.lettuceBatchSize().value());
        // Kafka: 3 up to 800k, then one per 200k: 801k already needs the 1M row's 5.
        assertThat(SizingModel.plan(target(800_001)).kafkaBrokers().value()).isEqualTo(5);
    }

    @Test
    void everyNumberGrowsWithTheTargetForEveryWorkload() {
        for (Workload w : Workload.values()) {
            Plan previous = null;
            for (long t = 1_000; t <= 3_000_000; t += 7_000) {
                TbmqClusterSpec spec = target(t);
                spec.setWorkload(w);
                Plan plan = SizingModel.plan(spec);
                if (previous != null) {
                    assertNotSmaller(previous, plan, t);
                }
                previous = plan;
            }
        }
    }

    @Test
    void extrapolatesAboveOneMillionWithTheTablesSteps() {
        Plan plan = SizingModel.plan(target(2_000_000));
        assertThat(plan.brokers().value()).isEqualTo(10);
        assertThat(plan.redisMasters().value()).isEqualTo(21);
        assertThat(plan.kafkaBrokers().value()).isEqualTo(10);
        assertThat(plan.partitions().value()).isEqualTo(40);
        assertThat(plan.lettuceBatchSize().value()).isEqualTo(1000);
        assertThat(SizingModel.plan(target(1_200_000)).lettuceBatchSize().value()).isEqualTo(600);
    }

    @Test
    void smallProfileStillRunsARealRedisClusterAndAWholeBroker() {
        Plan plan = SizingModel.plan(target(20_000));
        assertThat(plan.brokers().value()).isEqualTo(1);
        assertThat(plan.brokerCpuMillis().value()).isEqualTo(2_000);
        assertThat(plan.brokerMemoryMib().value()).isEqualTo(4096);
        assertThat(plan.redisMasters().value()).isEqualTo(3);
        assertThat(plan.kafkaBrokers().value()).isEqualTo(3);
        assertThat(plan.partitions().value()).isEqualTo(12);
        assertThat(plan.lettuceBatchSize().value()).isEqualTo(15);
        assertThat(plan.brokers().rule()).contains("small profile");

        Plan tiny = SizingModel.plan(target(1));
        assertThat(tiny.brokerCpuMillis().value()).isEqualTo(1_000);
        assertThat(tiny.lettuceBatchSize().value()).isEqualTo(5);
        assertThat(tiny.redisMasters().value()).isEqualTo(3);
    }

    @Test
    void aSmallerCpuRequestMeansMoreBrokers() {
        TbmqClusterSpec spec = target(200_000);
        spec.getBroker().setResources(cpu("4"));
        Plan plan = SizingModel.plan(spec);
        assertThat(plan.brokers().value()).isEqualTo(4);
        assertThat(plan.brokerCpuMillis().value()).isEqualTo(4_000);
        assertThat(plan.brokerCpuMillis().rule()).isEqualTo("spec.broker.resources.requests.cpu");

        spec.getBroker().setResources(cpu("3500m"));
        assertThat(SizingModel.plan(spec).brokers().value()).isEqualTo(5); // 200k / 43,750 = 4.6
        spec.getBroker().setResources(cpu("32"));
        assertThat(SizingModel.plan(spec).brokers().value()).isEqualTo(1);
        spec.setTargetThroughput(1_000_000);
        assertThat(SizingModel.plan(spec).brokers().value()).isEqualTo(3); // 1M / 400k
    }

    @Test
    void aTinyCpuRequestSizesEachBrokerButDoesNotMultiplyThem() {
        // Found on a real 2-core node: 100m per broker gave 16 brokers for 20k msg/s, all starting at once.
        TbmqClusterSpec spec = target(20_000);
        spec.getBroker().setResources(cpu("100m"));
        Plan plan = SizingModel.plan(spec);
        assertThat(plan.brokers().value()).isEqualTo(2);
        assertThat(plan.brokers().rule()).contains("counted as 1 vCPU");
        assertThat(plan.brokerCpuMillis().value()).isEqualTo(100);
        assertThat(plan.brokerCapacity()).as("what 2 x 100m carry at 12,500 msg/s per vCPU").isEqualTo(2_500);

        spec.setTargetThroughput(200_000);
        spec.getBroker().setResources(cpu("250m"));
        assertThat(SizingModel.plan(spec).brokers().value()).as("never more than one per vCPU of load").isEqualTo(16);
    }

    @Test
    void moreBrokersThanRoutersPartitionsRaiseThePartitions() {
        TbmqClusterSpec spec = target(200_000);
        spec.getBroker().setResources(cpu("1"));
        Plan plan = SizingModel.plan(spec);
        assertThat(plan.brokers().value()).isEqualTo(16);
        assertThat(plan.partitions().value()).isEqualTo(32);
        assertThat(plan.partitions().rule()).contains("2 per broker");
    }

    @Test
    void overridesAlwaysWin() {
        TbmqClusterSpec spec = target(1_000_000);
        spec.getOverrides().setBrokers(2);
        spec.getOverrides().setRedisMasters(4);
        spec.getOverrides().setKafkaBrokers(1);
        spec.getOverrides().setPartitions(7);
        spec.getOverrides().setLettuceBatchSize(42);
        spec.getOverrides().setReplicationFactor(1);
        Plan plan = SizingModel.plan(spec);
        assertThat(plan.brokers()).isEqualTo(new Sized(2, "spec.overrides.brokers"));
        assertThat(plan.redisMasters()).isEqualTo(new Sized(4, "spec.overrides.redisMasters"));
        assertThat(plan.kafkaBrokers()).isEqualTo(new Sized(1, "spec.overrides.kafkaBrokers"));
        assertThat(plan.partitions()).isEqualTo(new Sized(7, "spec.overrides.partitions"));
        assertThat(plan.lettuceBatchSize()).isEqualTo(new Sized(42, "spec.overrides.lettuceBatchSize"));
        assertThat(plan.replicationFactor()).isEqualTo(new Sized(1, "spec.overrides.replicationFactor"));
        // Fewer brokers than the load needs: each gets the CPU for its share (1M / 2 / 12,500).
        assertThat(plan.brokerCpuMillis().value()).isEqualTo(40_000);
    }

    @Test
    void replicationFollowsASmallKafka() {
        TbmqClusterSpec spec = target(10_000);
        spec.getOverrides().setKafkaBrokers(1);
        assertThat(SizingModel.plan(spec).replicationFactor().value()).isEqualTo(1);
    }

    @Test
    void externalComponentsAreNotProvisioned() {
        TbmqClusterSpec spec = target(600_000);
        spec.getKafka().setMode(Mode.EXTERNAL);
        spec.getRedis().setMode(Mode.EXTERNAL);
        Plan plan = SizingModel.plan(spec);
        assertThat(plan.kafkaBrokers().value()).isZero();
        assertThat(plan.redisMasters().value()).isZero();
        assertThat(plan.brokers().value()).isEqualTo(3);
        assertThat(plan.partitions().value()).isEqualTo(12);
        assertThat(plan.replicationFactor().value()).isEqualTo(3);
    }

    @Test
    void workloadProfilesShiftTheLoad() {
        TbmqClusterSpec fanOut = target(1_000_000);
        fanOut.setWorkload(Workload.FAN_OUT);
        Plan out = SizingModel.plan(fanOut);
        assertThat(out.brokers().value()).isEqualTo(4); // 0.7 x 1M = 700k
        assertThat(out.redisMasters().value()).isEqualTo(21); // 2 x 1M stored = 10 rows
        assertThat(out.lettuceBatchSize().value()).isEqualTo(1000);

        TbmqClusterSpec fanIn = target(1_000_000);
        fanIn.setWorkload(Workload.FAN_IN);
        Plan in = SizingModel.plan(fanIn);
        assertThat(in.brokers().value()).isEqualTo(5);
        assertThat(in.redisMasters().value()).isEqualTo(3);
        assertThat(in.lettuceBatchSize().value()).isEqualTo(5);
        assertThat(in.kafkaBrokers().value()).isEqualTo(5);
    }

    @Test
    void refusesANonPositiveTarget() {
        assertThatThrownBy(() -> SizingModel.plan(target(0))).hasMessageContaining("spec.targetThroughput");
    }

    private static ResourceRequirements cpu(String amount) {
        ResourceRequirements r = new ResourceRequirements();
        r.setRequests(Map.of("cpu", new Quantity(amount)));
        return r;
    }

    private static void assertNotSmaller(Plan before, Plan after, long t) {
        Map<String, Function<Plan, Sized>> fields = Map.of("brokers", Plan::brokers, "redisMasters", Plan::redisMasters,
                "kafkaBrokers", Plan::kafkaBrokers, "partitions", Plan::partitions, "lettuceBatchSize", Plan::lettuceBatchSize,
                "replicationFactor", Plan::replicationFactor);
        fields.forEach((name, f) -> assertThat(f.apply(after).value()).as(name + " at " + t)
                .isGreaterThanOrEqualTo(f.apply(before).value()));
        // Total broker CPU never shrinks either.
        assertThat((long) after.brokers().value() * after.brokerCpuMillis().value()).as("broker CPU at " + t)
                .isGreaterThanOrEqualTo((long) before.brokers().value() * before.brokerCpuMillis().value());
    }
}
