package io.tbmq.operator.sizing;

/**
 * What the sizing model decided for one TbmqCluster. Redis masters and Kafka brokers are 0 when that
 * component is external (the operator runs none).
 */
public record Plan(
        Sized brokers,
        Sized brokerCpuMillis,
        Sized brokerMemoryMib,
        Sized redisMasters,
        Sized kafkaBrokers,
        Sized partitions,
        Sized replicationFactor,
        Sized lettuceBatchSize) {

    /**
     * How much of the broker load the planned brokers can carry at the TBMQ paper's 12,500 msg/s
     * per vCPU, in msg/s: below the target when the CPU request is too small for it.
     */
    public long brokerCapacity() {
        return (long) brokers.value() * brokerCpuMillis.value() * SizingModel.PER_VCPU / 1000;
    }
}
