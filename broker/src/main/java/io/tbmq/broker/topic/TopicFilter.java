package io.tbmq.broker.topic;

/**
 * A validated topic filter as a client subscribed to it; {@code shareGroup} is set for a shared
 * subscription {@code $share/<group>/<filter>}, whose {@code filter} is the part after the group.
 */
public record TopicFilter(String raw, String filter, String shareGroup, String[] levels) {

    public boolean isShared() {
        return shareGroup != null;
    }

    /** The key a subscription is stored under in a session: the raw filter, share prefix included. */
    public String key() {
        return raw;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TopicFilter other && raw.equals(other.raw);
    }

    @Override
    public int hashCode() {
        return raw.hashCode();
    }

    @Override
    public String toString() {
        return raw;
    }
}
