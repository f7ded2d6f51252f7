package io.tbmq.operator.sizing;

import java.math.BigDecimal;
import java.math.RoundingMode;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.Overrides;
import io.tbmq.operator.api.TbmqClusterSpec;
import io.tbmq.operator.api.Workload;

/**
 * Spec in, plan out: how many brokers, Redis masters, Kafka brokers, partitions and which Lettuce
 * batch size a target throughput needs. Reproduces the TBMQ paper's Tables 4 and 5 at their rows (200k to
 * 1M msg/s in steps of 200k), rounds every target up to the next row so nothing between rows is
 * under-provisioned, extrapolates above 1M with the same steps, and offers a small profile below
 * 200k. Every rule is explained, with the table it came from, in docs/sizing.md.
 */
public final class SizingModel {
    /** Table 4's step: each row adds 200k msg/s, one broker and two Redis masters. */
    public static final long ROW = 200_000;
    /** Table 3: the brokers of Table 4 have 16 vCPU (c7a.4xlarge) and 32 GiB. */
    public static final int TABLE_BROKER_VCPU = 16;
    /** 200k msg/s per 16-vCPU broker. */
    public static final long PER_VCPU = ROW / TABLE_BROKER_VCPU;
    static final int MEMORY_MIB_PER_VCPU = 2048;
    /** Table 5's Lettuce batch sizes at 200k, 400k, 600k, 800k and 1M msg/s. */
    static final int[] TABLE_BATCH = {150, 250, 300, 400, 500};
    /** Table 4 keeps 3 Kafka brokers up to 800k (4 rows) and has 5 at 1M. */
    static final int KAFKA_THREE_UP_TO_ROWS = 4;
    /**
     * A CPU request below this still counts as this much when brokers are counted: a small request
     * (100m) would otherwise multiply the brokers (16 JVMs for 20k msg/s) instead of sizing each.
     */
    static final int MIN_COUNTED_CPU_MILLIS = 1000;
    /** Each broker node runs 2 consumers of tbmq.msg.all (tbmq.kafka.msg-all-consumers). */
    static final int ROUTERS_PER_BROKER = 2;

    private SizingModel() {
    }

    public static Plan plan(TbmqClusterSpec spec) {
        long target = spec.getTargetThroughput();
        if (target <= 0 || target > TbmqClusterSpec.MAX_TARGET_THROUGHPUT) {
            throw new IllegalArgumentException("spec.targetThroughput must be between 1 and "
                    + TbmqClusterSpec.MAX_TARGET_THROUGHPUT + ", was " + target);
        }
        Workload workload = spec.getWorkload() == null ? Workload.P2P : spec.getWorkload();
        Overrides o = overrides(spec);
        int rows = rows(target);
        long brokerLoad = (long) Math.ceil(target * workload.brokerFactor());
        long redisLoad = (long) Math.ceil(target * workload.redisFactor());

        Integer requestedCpu = cpuRequestMillis(spec.getBroker() == null ? null : spec.getBroker().getResources());
        Sized brokers;
        Sized cpu;
        if (o.getBrokers() != null) {
            brokers = Sized.override(o.getBrokers(), "brokers");
            cpu = requestedCpu != null
                    ? new Sized(requestedCpu, "spec.broker.resources.requests.cpu")
                    : new Sized(wholeVcpuMillis(divCeil(brokerLoad, (long) o.getBrokers() * PER_VCPU)),
                            "load / brokers at 12,500 msg/s per vCPU (Table 4: 200k per 16-vCPU broker)");
        } else if (requestedCpu != null) {
            long counted = Math.max(requestedCpu, MIN_COUNTED_CPU_MILLIS);
            long perBroker = PER_VCPU * counted / 1000;
            brokers = new Sized(atLeastOne(divCeil(brokerLoad, perBroker)), requestedCpu < MIN_COUNTED_CPU_MILLIS
                    ? "load / 12,500 msg/s per vCPU, each broker counted as 1 vCPU (its request is " + requestedCpu + "m)"
                    : "load / (12,500 msg/s per requested vCPU) (Table 4: 200k per 16-vCPU broker)");
            cpu = new Sized(requestedCpu, "spec.broker.resources.requests.cpu");
        } else if (brokerLoad >= ROW) {
            brokers = new Sized(atLeastOne(divCeil(brokerLoad, ROW)), "one 16-vCPU broker per 200k msg/s (Table 4)");
            cpu = new Sized(TABLE_BROKER_VCPU * 1000, "Table 3: 16 vCPU per broker");
        } else {
            brokers = new Sized(1, "small profile: one broker below 200k msg/s");
            cpu = new Sized(wholeVcpuMillis(divCeil(brokerLoad, PER_VCPU)), "small profile: 12,500 msg/s per vCPU");
        }
        Sized memory = new Sized(Math.max(1024, (int) ((long) divCeil(cpu.value(), 1000) * MEMORY_MIB_PER_VCPU)),
                "2 GiB per vCPU (Table 3: 32 GiB for 16 vCPU)");

        Sized redisMasters = redisMasters(spec, o, redisLoad);
        Sized kafkaBrokers = kafkaBrokers(spec, o, rows);
        Sized partitions = partitions(o, rows, brokers.value());
        Sized replication = replication(spec, o, kafkaBrokers.value());
        Sized batch = lettuceBatch(o, redisLoad);
        return new Plan(brokers, cpu, memory, redisMasters, kafkaBrokers, partitions, replication, batch);
    }

    /** The messages per second the brokers must route for {@code spec} (the target, scaled by the workload). */
    public static long brokerLoad(TbmqClusterSpec spec) {
        Workload workload = spec.getWorkload() == null ? Workload.P2P : spec.getWorkload();
        return (long) Math.ceil(spec.getTargetThroughput() * workload.brokerFactor());
    }

    /**
     * The Redis masters {@link #plan} gives {@code spec} (0 for an external Redis), without the rest of
     * the plan: the validator checks them against a Redis Cluster's limit before anything is sized.
     */
    public static Sized redisMasters(TbmqClusterSpec spec) {
        Workload workload = spec.getWorkload() == null ? Workload.P2P : spec.getWorkload();
        return redisMasters(spec, overrides(spec), (long) Math.ceil(spec.getTargetThroughput() * workload.redisFactor()));
    }

    /** The Kafka brokers {@link #plan} gives {@code spec} (0 for an external Kafka): a replication factor must fit them. */
    public static Sized kafkaBrokers(TbmqClusterSpec spec) {
        return kafkaBrokers(spec, overrides(spec), rows(spec.getTargetThroughput()));
    }

    private static Overrides overrides(TbmqClusterSpec spec) {
        return spec.getOverrides() == null ? new Overrides() : spec.getOverrides();
    }

    /** The table row a load needs: rounded up, at least 1. */
    static int rows(long load) {
        return atLeastOne(divCeil(load, ROW));
    }

    private static Sized redisMasters(TbmqClusterSpec spec, Overrides o, long redisLoad) {
        if (spec.getRedis() != null && spec.getRedis().getMode() == Mode.EXTERNAL) {
            return new Sized(0, "external Redis");
        }
        if (o.getRedisMasters() != null) {
            return Sized.override(o.getRedisMasters(), "redisMasters");
        }
        if (redisLoad <= ROW) {
            return new Sized(3, "3 masters up to 200k msg/s of stored messages (Table 4; a Redis Cluster needs 3)");
        }
        return new Sized(2 * divCeil(redisLoad, ROW) + 1, "2 masters per 200k msg/s + 1 (Table 4: 3, 5, 7, 9, 11)");
    }

    private static Sized kafkaBrokers(TbmqClusterSpec spec, Overrides o, int rows) {
        if (spec.getKafka() != null && spec.getKafka().getMode() == Mode.EXTERNAL) {
            return new Sized(0, "external Kafka");
        }
        if (o.getKafkaBrokers() != null) {
            return Sized.override(o.getKafkaBrokers(), "kafkaBrokers");
        }
        if (rows <= KAFKA_THREE_UP_TO_ROWS) {
            return new Sized(3, "3 brokers up to 800k msg/s (Table 4)");
        }
        return new Sized(rows, "one broker per 200k msg/s above 800k (Table 4: 5 at 1M)");
    }

    private static Sized partitions(Overrides o, int rows, int brokers) {
        if (o.getPartitions() != null) {
            return Sized.override(o.getPartitions(), "partitions");
        }
        int table = Math.max(12, 4 * rows);
        int routers = ROUTERS_PER_BROKER * brokers;
        if (routers > table) {
            return new Sized(routers, "2 per broker, so every router consumer has a partition");
        }
        return new Sized(table, "max(12, 4 per 200k msg/s) (Table 5: 12, 12, 12, 16, 20)");
    }

    private static Sized replication(TbmqClusterSpec spec, Overrides o, int kafkaBrokers) {
        if (o.getReplicationFactor() != null) {
            return Sized.override(o.getReplicationFactor(), "replicationFactor");
        }
        if (spec.getKafka() != null && spec.getKafka().getMode() == Mode.EXTERNAL) {
            return new Sized(3, "external Kafka: 3 (override for a smaller cluster)");
        }
        return new Sized(Math.min(3, kafkaBrokers), "min(3, Kafka brokers)");
    }

    private static Sized lettuceBatch(Overrides o, long redisLoad) {
        if (o.getLettuceBatchSize() != null) {
            return Sized.override(o.getLettuceBatchSize(), "lettuceBatchSize");
        }
        if (redisLoad < ROW) {
            return new Sized(Math.max(5, divCeil(150 * redisLoad, ROW)),
                    "small profile: 150 scaled to the load, at least 5 (the reference's default)");
        }
        int rows = rows(redisLoad);
        if (rows <= TABLE_BATCH.length) {
            return new Sized(TABLE_BATCH[rows - 1], "Table 5 row for " + rows * 200 + "k msg/s");
        }
        return new Sized(TABLE_BATCH[TABLE_BATCH.length - 1] + 100 * (rows - TABLE_BATCH.length),
                "500 + 100 per 200k msg/s above 1M (Table 5's last steps)");
    }

    /** The CPU request in millicores, or null when none is set. */
    static Integer cpuRequestMillis(ResourceRequirements resources) {
        if (resources == null || resources.getRequests() == null || resources.getRequests().get("cpu") == null) {
            return null;
        }
        Quantity q = resources.getRequests().get("cpu");
        BigDecimal cores = Quantity.getAmountInBytes(q);
        return cores.multiply(BigDecimal.valueOf(1000)).setScale(0, RoundingMode.CEILING).intValueExact();
    }

    private static int wholeVcpuMillis(int vcpu) {
        return Math.max(1, vcpu) * 1000;
    }

    static int divCeil(long a, long b) {
        return Math.toIntExact((a + b - 1) / b);
    }

    private static int atLeastOne(int n) {
        return Math.max(1, n);
    }
}
