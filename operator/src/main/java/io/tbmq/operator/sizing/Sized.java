package io.tbmq.operator.sizing;

/** One computed number and the rule that gave it (shown in the status, explained in docs/sizing.md). */
public record Sized(int value, String rule) {

    static Sized override(int value, String field) {
        return new Sized(value, "spec.overrides." + field);
    }
}
