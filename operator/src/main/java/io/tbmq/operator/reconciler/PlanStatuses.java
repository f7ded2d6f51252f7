package io.tbmq.operator.reconciler;

import io.tbmq.operator.api.PlanStatus;
import io.tbmq.operator.api.PlanStatus.PlannedValue;
import io.tbmq.operator.sizing.Plan;
import io.tbmq.operator.sizing.Sized;

/** The plan as the status shows it. */
final class PlanStatuses {
    private PlanStatuses() {
    }

    static PlanStatus of(Plan plan) {
        PlanStatus s = new PlanStatus();
        s.setBrokers(value(plan.brokers(), ""));
        s.setBrokerCpu(value(plan.brokerCpuMillis(), "m"));
        s.setRedisMasters(value(plan.redisMasters(), ""));
        s.setKafkaBrokers(value(plan.kafkaBrokers(), ""));
        s.setPartitions(value(plan.partitions(), ""));
        s.setReplicationFactor(value(plan.replicationFactor(), ""));
        s.setLettuceBatchSize(value(plan.lettuceBatchSize(), ""));
        return s;
    }

    private static PlannedValue value(Sized sized, String unit) {
        return new PlannedValue(sized.value() + unit, sized.rule());
    }
}
