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
}
