package io.tbmq.broker.topic;

/**
 * Topic names and filters (MQTT §4.7): validation, matching with the {@code $}-topic rule, and
 * the "covers" relation between an ACL pattern and a requested filter.
 */
public final class Topics {
    public static final String SHARE_PREFIX = "$share/";

    private Topics() {
    }

    /**
     * Why {@code topic} cannot be published to, or null if it can: empty [MQTT-4.7.3-1], wildcard
     * characters [MQTT-3.3.2-2], or more levels than allowed.
     */
    public static String invalidTopicName(String topic, int maxLevels) {
        if (topic.isEmpty()) {
            return "topic name is empty";
        }
        int levels = 1;
        for (int i = 0; i < topic.length(); i++) {
            char c = topic.charAt(i);
            if (c == '+' || c == '#') {
                return "topic name contains the wildcard '" + c + "'";
            }
            if (c == '/') {
                levels++;
            }
        }
        return levels > maxLevels ? "topic name has " + levels + " levels, more than " + maxLevels : null;
    }

    /** Parses a filter, shared or not; throws {@link IllegalArgumentException} with the reason when invalid. */
    public static TopicFilter parseFilter(String raw, int maxLevels) {
        String group = null;
        String filter = raw;
        if (raw.startsWith(SHARE_PREFIX)) {
            int slash = raw.indexOf('/', SHARE_PREFIX.length());
            if (slash < 0 || slash == SHARE_PREFIX.length()) {
                throw new IllegalArgumentException("shared subscription needs $share/<group>/<filter>");
            }
            group = raw.substring(SHARE_PREFIX.length(), slash);
            if (group.indexOf('+') >= 0 || group.indexOf('#') >= 0) {
                throw new IllegalArgumentException("share name must not contain wildcards [MQTT-4.8.2-2]");
            }
            filter = raw.substring(slash + 1);
            if (filter.isEmpty()) {
                throw new IllegalArgumentException("shared subscription has an empty filter");
            }
        }
        if (filter.isEmpty()) {
            throw new IllegalArgumentException("topic filter is empty [MQTT-4.7.3-1]");
        }
        String[] levels = filter.split("/", -1);
        if (levels.length > maxLevels) {
            throw new IllegalArgumentException("topic filter has " + levels.length + " levels, more than " + maxLevels);
        }
        for (int i = 0; i < levels.length; i++) {
            String level = levels[i];
            if (level.indexOf('#') >= 0 && (!level.equals("#") || i != levels.length - 1)) {
                throw new IllegalArgumentException("'#' must be a whole level and the last one [MQTT-4.7.1-1]");
            }
            if (level.indexOf('+') >= 0 && !level.equals("+")) {
                throw new IllegalArgumentException("'+' must occupy a whole level [MQTT-4.7.1-2]");
            }
        }
        return new TopicFilter(raw, filter, group, levels);
    }

    /** Whether {@code filter} matches {@code topic}; wildcards at the first level never match a $-topic [MQTT-4.7.2-1]. */
    public static boolean matches(String filter, String topic) {
        if (topic.startsWith("$") && (filter.startsWith("+") || filter.startsWith("#"))) {
            return false;
        }
        return matchesLevels(filter, topic);
    }

    /**
     * Matching for ACL patterns: like {@link #matches} but without the $-topic rule, so an
     * administrator's {@code #} means every topic.
     */
    public static boolean patternMatches(String pattern, String topic) {
        return matchesLevels(pattern, topic);
    }

    private static boolean matchesLevels(String filter, String topic) {
        return matchesLevels(filter.split("/", -1), topic.split("/", -1));
    }

    /** Level-wise match of a filter against a topic, both already split, without the $-topic rule. */
    public static boolean matchesLevels(String[] f, String[] t) {
        int i = 0;
        for (; i < f.length; i++) {
            if (f[i].equals("#")) {
                return true;
            }
            if (i >= t.length) {
                return false;
            }
            if (!f[i].equals("+") && !f[i].equals(t[i])) {
                return false;
            }
        }
        return i == t.length;
    }

    /**
     * Whether every topic that {@code filter} matches is also matched by the ACL {@code pattern}:
     * {@code a/+/#} covers {@code a/b/c} and {@code a/+/c} but not {@code a/#} or {@code #}.
     */
    public static boolean covers(String pattern, String filter) {
        String[] p = pattern.split("/", -1);
        String[] f = filter.split("/", -1);
        for (int i = 0; i < p.length; i++) {
            if (p[i].equals("#")) {
                return true;
            }
            if (i >= f.length) {
                return false;
            }
            if (p[i].equals("+")) {
                if (f[i].equals("#")) {
                    return false;
                }
                continue;
            }
            if (!p[i].equals(f[i])) {
                return false;
            }
        }
        return p.length == f.length;
    }
}
