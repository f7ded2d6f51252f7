package io.tbmq.operator.validation;

import java.util.List;

import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.Overrides;
import io.tbmq.operator.api.TbmqClusterSpec;
import io.tbmq.operator.api.Workload;
import io.tbmq.operator.sizing.Sized;
import io.tbmq.operator.sizing.SizingModel;

/**
 * The checks that need the numbers the sizing model would compute: the plan must fit what Redis
 * Cluster and Kafka can run, and is checked before any sizing code runs on it.
 */
final class PlanLimits {
    private PlanLimits() {
    }

    static void check(TbmqClusterSpec spec, List<FieldError> errors) {
        long target = spec.getTargetThroughput();
        Overrides o = spec.getOverrides() == null ? new Overrides() : spec.getOverrides();
        if (o.getRedisMasters() != null && o.getRedisMasters() > Overrides.MAX_REDIS_MASTERS) {
            errors.add(new FieldError("spec.overrides.redisMasters", "must be at most " + Overrides.MAX_REDIS_MASTERS
                    + " (Redis documents 1000 nodes as a Redis Cluster's upper bound), was " + o.getRedisMasters()));
        }
        if (target > TbmqClusterSpec.MAX_TARGET_THROUGHPUT) {
            errors.add(new FieldError("spec.targetThroughput", "must be at most " + TbmqClusterSpec.MAX_TARGET_THROUGHPUT
                    + " msg/s, was " + target + ": above it the plan needs more than " + Overrides.MAX_REDIS_MASTERS
                    + " Redis masters, the largest Redis Cluster Redis documents"));
            return;
        }
        if (target <= 0) {
            return;
        }
        if (o.getRedisMasters() == null) {
            redisMastersOfTheTarget(spec, errors);
        }
        if (o.getKafkaBrokers() == null || o.getKafkaBrokers() >= 1) {
            replicationFactor(spec, o, errors);
        }
    }

    /** A workload storing more than P2P (FAN_OUT) reaches the Redis Cluster limit below the largest target. */
    private static void redisMastersOfTheTarget(TbmqClusterSpec spec, List<FieldError> errors) {
        int masters = SizingModel.redisMasters(spec).value();
        if (masters <= Overrides.MAX_REDIS_MASTERS) {
            return;
        }
        Workload workload = spec.getWorkload() == null ? Workload.P2P : spec.getWorkload();
        long most = (long) (TbmqClusterSpec.MAX_TARGET_THROUGHPUT / workload.redisFactor());
        errors.add(new FieldError("spec.targetThroughput", spec.getTargetThroughput() + " msg/s of workload " + workload
                + " needs " + masters + " Redis masters, more than the " + Overrides.MAX_REDIS_MASTERS + " nodes Redis documents"
                + " as a Redis Cluster's upper bound: at most " + most + " msg/s for " + workload));
    }

    /** A managed Kafka cannot place more replicas of a partition than it has brokers, computed or overridden. */
    private static void replicationFactor(TbmqClusterSpec spec, Overrides o, List<FieldError> errors) {
        boolean managedKafka = spec.getKafka() == null || spec.getKafka().getMode() != Mode.EXTERNAL;
        if (!managedKafka || o.getReplicationFactor() == null) {
            return;
        }
        Sized kafkaBrokers = SizingModel.kafkaBrokers(spec);
        if (o.getReplicationFactor() > kafkaBrokers.value()) {
            errors.add(new FieldError("spec.overrides.replicationFactor", "is " + o.getReplicationFactor() + ", more than the plan's "
                    + kafkaBrokers.value() + " Kafka brokers (" + kafkaBrokers.rule() + "): each replica needs a broker of its own"));
        }
    }
}
