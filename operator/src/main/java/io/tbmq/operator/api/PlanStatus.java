package io.tbmq.operator.api;

/** The plan as the status shows it: each number with the rule it came from. */
public class PlanStatus {
    private PlannedValue brokers;
    private PlannedValue brokerCpu;
    private PlannedValue redisMasters;
    private PlannedValue kafkaBrokers;
    private PlannedValue partitions;
    private PlannedValue replicationFactor;
    private PlannedValue lettuceBatchSize;

    public PlannedValue getBrokers() {
        return brokers;
    }

    public void setBrokers(PlannedValue brokers) {
        this.brokers = brokers;
    }

    public PlannedValue getBrokerCpu() {
        return brokerCpu;
    }

    public void setBrokerCpu(PlannedValue brokerCpu) {
        this.brokerCpu = brokerCpu;
    }

    public PlannedValue getRedisMasters() {
        return redisMasters;
    }

    public void setRedisMasters(PlannedValue redisMasters) {
        this.redisMasters = redisMasters;
    }

    public PlannedValue getKafkaBrokers() {
        return kafkaBrokers;
    }

    public void setKafkaBrokers(PlannedValue kafkaBrokers) {
        this.kafkaBrokers = kafkaBrokers;
    }

    public PlannedValue getPartitions() {
        return partitions;
    }

    public void setPartitions(PlannedValue partitions) {
        this.partitions = partitions;
    }

    public PlannedValue getReplicationFactor() {
        return replicationFactor;
    }

    public void setReplicationFactor(PlannedValue replicationFactor) {
        this.replicationFactor = replicationFactor;
    }

    public PlannedValue getLettuceBatchSize() {
        return lettuceBatchSize;
    }

    public void setLettuceBatchSize(PlannedValue lettuceBatchSize) {
        this.lettuceBatchSize = lettuceBatchSize;
    }

    /** A number and the rule that gave it. */
    public static class PlannedValue {
        private String value;
        private String rule;

        public PlannedValue() {
        }

        public PlannedValue(String value, String rule) {
            this.value = value;
            this.rule = rule;
        }

        public String getValue() {
            return value;
        }

        public void setValue(String value) {
            this.value = value;
        }

        public String getRule() {
            return rule;
        }

        public void setRule(String rule) {
            this.rule = rule;
        }
    }
}
