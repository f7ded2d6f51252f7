package io.tbmq.operator.provision;

/** What one component (Kafka, Redis, brokers) looks like after a reconcile pass. */
public record ComponentStatus(String condition, boolean ready, String reason, String message, String summary) {

    public static ComponentStatus external(String condition) {
        return new ComponentStatus(condition, true, "External", "not managed by the operator", "external");
    }
}
