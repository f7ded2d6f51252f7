package io.tbmq.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Values that replace what the sizing model computes; unset means "computed". */
public class Overrides {
    /** Redis documents 1000 nodes as a Redis Cluster's upper bound; the operator runs one node per master. */
    public static final int MAX_REDIS_MASTERS = 1000;

    @Min(1)
    @JsonPropertyDescription("Broker nodes (StatefulSet replicas).")
    private Integer brokers;

    @Min(3)
    @Max(MAX_REDIS_MASTERS)
    @JsonPropertyDescription("Redis Cluster masters (at least 3).")
    private Integer redisMasters;

    @Min(1)
    @JsonPropertyDescription("Kafka brokers (Strimzi node pool replicas).")
    private Integer kafkaBrokers;

    @Min(1)
    @JsonPropertyDescription("Partitions of tbmq.msg.all, the topic every PUBLISH is routed through. They only ever grow.")
    private Integer partitions;

    @Min(1)
    @Max(10000)
    @JsonPropertyDescription("Redis commands the broker buffers before a flush (the TBMQ paper's Lettuce batch size).")
    private Integer lettuceBatchSize;

    @Min(1)
    @JsonPropertyDescription("Replication factor of the broker's Kafka topics.")
    private Integer replicationFactor;

    public Integer getBrokers() {
        return brokers;
    }

    public void setBrokers(Integer brokers) {
        this.brokers = brokers;
    }

    public Integer getRedisMasters() {
        return redisMasters;
    }

    public void setRedisMasters(Integer redisMasters) {
        this.redisMasters = redisMasters;
    }

    public Integer getKafkaBrokers() {
        return kafkaBrokers;
    }

    public void setKafkaBrokers(Integer kafkaBrokers) {
        this.kafkaBrokers = kafkaBrokers;
    }

    public Integer getPartitions() {
        return partitions;
    }

    public void setPartitions(Integer partitions) {
        this.partitions = partitions;
    }

    public Integer getLettuceBatchSize() {
        return lettuceBatchSize;
    }

    public void setLettuceBatchSize(Integer lettuceBatchSize) {
        this.lettuceBatchSize = lettuceBatchSize;
    }

    public Integer getReplicationFactor() {
        return replicationFactor;
    }

    public void setReplicationFactor(Integer replicationFactor) {
        this.replicationFactor = replicationFactor;
    }
}
