package io.tbmq.operator.reconciler;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;

/**
 * Sets a condition the Kubernetes way: lastTransitionTime changes only when the status does, so
 * a steady condition keeps the time it became true.
 */
public final class Conditions {
    public static final String READY = "Ready";
    public static final String PROGRESSING = "Progressing";
    public static final String DEGRADED = "Degraded";

    private Conditions() {
    }

    public static void set(List<Condition> conditions, String type, boolean status, String reason, String message,
            long generation, Instant now) {
        String value = status ? "True" : "False";
        Condition existing = conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
        String since = existing != null && value.equals(existing.getStatus()) ? existing.getLastTransitionTime()
                : now.truncatedTo(ChronoUnit.SECONDS).toString();
        Condition updated = new ConditionBuilder().withType(type).withStatus(value).withReason(reason).withMessage(message)
                .withObservedGeneration(generation).withLastTransitionTime(since).build();
        if (existing == null) {
            conditions.add(updated);
        } else {
            conditions.set(conditions.indexOf(existing), updated);
        }
    }

    public static Condition find(List<Condition> conditions, String type) {
        return conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }
}
