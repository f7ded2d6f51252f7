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

    /** The partitions the last completed reconcile applied (0 before the first). */
    static int lastPartitions(io.tbmq.operator.api.TbmqClusterStatus status) {
        PlanStatus plan = status.getPlan();
        if (plan == null || plan.getPartitions() == null || plan.getPartitions().getValue() == null) {
            return 0;
        }
        try {
            return Integer.parseInt(plan.getPartitions().getValue().trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static PlannedValue value(Sized sized, String unit) {
        return new PlannedValue(sized.value() + unit, sized.rule());
    }
}
