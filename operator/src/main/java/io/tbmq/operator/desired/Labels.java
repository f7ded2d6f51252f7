package io.tbmq.operator.desired;

import java.util.LinkedHashMap;
import java.util.Map;

/** The recommended app.kubernetes.io labels; the selector labels are the stable subset. */
public final class Labels {
    public static final String NAME = "app.kubernetes.io/name";
    public static final String INSTANCE = "app.kubernetes.io/instance";
    public static final String COMPONENT = "app.kubernetes.io/component";
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String PART_OF = "app.kubernetes.io/part-of";
    public static final String OPERATOR = "tbmq-operator";

    private Labels() {
    }

    public static Map<String, String> selector(String cluster, String component) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(NAME, "tbmq-" + component);
        labels.put(INSTANCE, cluster);
        labels.put(COMPONENT, component);
        return labels;
    }

    public static Map<String, String> of(String cluster, String component) {
        Map<String, String> labels = selector(cluster, component);
        labels.put(PART_OF, "tbmq");
        labels.put(MANAGED_BY, OPERATOR);
        return labels;
    }
}
