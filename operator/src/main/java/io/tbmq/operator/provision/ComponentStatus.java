package io.tbmq.operator.provision;

import java.util.ArrayList;
import java.util.List;

/**
 * What one component (Kafka, Redis, brokers) looks like after a reconcile pass, and what else a
 * user should know about it ({@link Notice}s become conditions of their own, true while present).
 */
public record ComponentStatus(String condition, boolean ready, String reason, String message, String summary,
        List<Notice> notices) {

    /** A condition that is true while a component reports it, and removed when it does not. */
    public record Notice(String type, String reason, String message) {
    }

    public ComponentStatus(String condition, boolean ready, String reason, String message, String summary) {
        this(condition, ready, reason, message, summary, List.of());
    }

    public static ComponentStatus external(String condition) {
        return new ComponentStatus(condition, true, "External", "not managed by the operator", "external");
    }

    public ComponentStatus with(Notice notice) {
        List<Notice> all = new ArrayList<>(notices);
        all.add(notice);
        return new ComponentStatus(condition, ready, reason, message, summary, List.copyOf(all));
    }
}
