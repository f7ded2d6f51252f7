package io.tbmq.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.crd.generator.annotation.PrinterColumn;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/** What the user wants; every computed number can be overridden in {@link #overrides}. */
public class TbmqClusterSpec {
    /**
     * The largest target: its P2P plan has 999 Redis masters (2 per 200k msg/s + 1), within the 1000
     * nodes Redis documents as a Redis Cluster's upper bound, and every count in the plan stays far
     * from int overflow.
     */
    public static final long MAX_TARGET_THROUGHPUT = 99_800_000;

    @Required
    @Min(1)
    @Max(MAX_TARGET_THROUGHPUT)
    @PrinterColumn(name = "Target")
    @JsonPropertyDescription("Messages per second, in + out, the cluster must sustain (the TBMQ paper's measure). Everything else is sized from it.")
    private long targetThroughput;

    @JsonPropertyDescription("Traffic pattern: P2P (default, the TBMQ paper's tables), FAN_IN or FAN_OUT.")
    private Workload workload = Workload.P2P;

    private BrokerSpec broker = new BrokerSpec();
    private KafkaSpec kafka = new KafkaSpec();
    private RedisSpec redis = new RedisSpec();

    @JsonPropertyDescription("Explicit values that win over the sizing model.")
    private Overrides overrides = new Overrides();

    @JsonPropertyDescription("Prometheus scraping of the brokers and their alerts (a PodMonitor and a PrometheusRule for the Prometheus Operator).")
    private MonitoringSpec monitoring = new MonitoringSpec();

    public long getTargetThroughput() {
        return targetThroughput;
    }

    public void setTargetThroughput(long targetThroughput) {
        this.targetThroughput = targetThroughput;
    }

    public Workload getWorkload() {
        return workload;
    }

    public void setWorkload(Workload workload) {
        this.workload = workload;
    }

    public BrokerSpec getBroker() {
        return broker;
    }

    public void setBroker(BrokerSpec broker) {
        this.broker = broker;
    }

    public KafkaSpec getKafka() {
        return kafka;
    }

    public void setKafka(KafkaSpec kafka) {
        this.kafka = kafka;
    }

    public RedisSpec getRedis() {
        return redis;
    }

    public void setRedis(RedisSpec redis) {
        this.redis = redis;
    }

    public Overrides getOverrides() {
        return overrides;
    }

    public void setOverrides(Overrides overrides) {
        this.overrides = overrides;
    }

    public MonitoringSpec getMonitoring() {
        return monitoring;
    }

    public void setMonitoring(MonitoringSpec monitoring) {
        this.monitoring = monitoring;
    }
}
