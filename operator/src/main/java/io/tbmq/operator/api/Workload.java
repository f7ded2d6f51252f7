package io.tbmq.operator.api;

/**
 * The traffic pattern the cluster is sized for (docs/sizing.md). The factors scale the target
 * throughput into broker work and into Redis writes, relative to the TBMQ paper's P2P performance tests.
 */
public enum Workload {
    /** One publisher to one persistent DEVICE subscriber: the TBMQ paper's Tables 4 and 5. */
    P2P(1.0, 1.0),
    /**
     * Many publishers to few subscribers, expected to be APPLICATION clients (their backlog is in
     * Kafka), so Redis only needs its minimal cluster.
     */
    FAN_IN(1.0, 0.0),
    /**
     * One publisher to many persistent DEVICE subscribers: routing is done once per inbound message
     * (measured 0.7 of P2P's broker CPU per message), while nearly every message counted is a stored
     * delivery (twice P2P's share of Redis writes).
     */
    FAN_OUT(0.7, 2.0);

    private final double brokerFactor;
    private final double redisFactor;

    Workload(double brokerFactor, double redisFactor) {
        this.brokerFactor = brokerFactor;
        this.redisFactor = redisFactor;
    }

    public double brokerFactor() {
        return brokerFactor;
    }

    public double redisFactor() {
        return redisFactor;
    }
}
