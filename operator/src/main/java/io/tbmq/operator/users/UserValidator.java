package io.tbmq.operator.users;

import java.util.ArrayList;
import java.util.List;

import io.tbmq.operator.api.TbmqUserSpec;
import io.tbmq.operator.validation.FieldError;

/** The checks the broker makes of a credentials entry, made before the entry reaches the brokers. */
public final class UserValidator {
    private UserValidator() {
    }

    public static List<FieldError> validate(TbmqUserSpec spec) {
        List<FieldError> errors = new ArrayList<>();
        if (spec == null) {
            errors.add(new FieldError("spec", "missing"));
            return errors;
        }
        if (spec.getCluster() == null || spec.getCluster().isBlank()) {
            errors.add(new FieldError("spec.cluster", "names no TbmqCluster"));
        }
        TbmqUserSpec.Acl acl = spec.getAcl() == null ? new TbmqUserSpec.Acl() : spec.getAcl();
        patterns(errors, "spec.acl.publish", acl.getPublish());
        patterns(errors, "spec.acl.subscribe", acl.getSubscribe());
        patterns(errors, "spec.acl.denyPublish", acl.getDenyPublish());
        patterns(errors, "spec.acl.denySubscribe", acl.getDenySubscribe());
        return errors;
    }

    private static void patterns(List<FieldError> errors, String field, List<String> patterns) {
        if (patterns == null) {
            return;
        }
        for (int i = 0; i < patterns.size(); i++) {
            String problem = problem(patterns.get(i));
            if (problem != null) {
                errors.add(new FieldError(field + "[" + i + "]", "'" + patterns.get(i) + "' " + problem));
            }
        }
    }

    /** What is wrong with an MQTT topic filter (with %c and %u standing for a level's text), or null. */
    static String problem(String pattern) {
        if (pattern == null || pattern.isEmpty()) {
            return "is empty";
        }
        if (pattern.indexOf('\0') >= 0) {
            return "contains a NUL character";
        }
        String[] levels = pattern.split("/", -1);
        for (int i = 0; i < levels.length; i++) {
            String level = levels[i];
            if (level.contains("#") && (!level.equals("#") || i != levels.length - 1)) {
                return "has '#' other than as the whole last level";
            }
            if (level.contains("+") && !level.equals("+")) {
                return "has '+' other than as a whole level";
            }
        }
        return null;
    }
}
