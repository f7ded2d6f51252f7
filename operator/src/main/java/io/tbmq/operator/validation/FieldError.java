package io.tbmq.operator.validation;

/** One invalid setting: the field's path in the resource and what is wrong with it. */
public record FieldError(String field, String message) {

    @Override
    public String toString() {
        return field + ": " + message;
    }
}
