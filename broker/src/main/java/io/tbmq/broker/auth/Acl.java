package io.tbmq.broker.auth;

import java.util.ArrayList;
import java.util.List;

import io.tbmq.broker.topic.TopicFilter;
import io.tbmq.broker.topic.Topics;

/**
 * What one connected client may publish to and subscribe to: topic patterns (filters with
 * wildcards), with {@code %c} and {@code %u} already replaced by its client id and user name.
 */
public final class Acl {
    public static final Acl ALLOW_ALL = new Acl(List.of("#"), List.of("#"));
    public static final Acl DENY_ALL = new Acl(List.of(), List.of());

    private final List<String> publish;
    private final List<String> subscribe;

    private Acl(List<String> publish, List<String> subscribe) {
        this.publish = publish;
        this.subscribe = subscribe;
    }

    /**
     * Instantiates templates for one client. A template whose placeholder would receive a value
     * containing {@code +}, {@code #} or {@code /} (or an empty one) is dropped: a client must not
     * widen its own rights by choosing its id.
     */
    public static Acl forClient(List<String> publishTemplates, List<String> subscribeTemplates, String clientId,
            String username) {
        return new Acl(instantiate(publishTemplates, clientId, username), instantiate(subscribeTemplates, clientId, username));
    }

    private static List<String> instantiate(List<String> templates, String clientId, String username) {
        List<String> out = new ArrayList<>(templates.size());
        for (String t : templates) {
            String pattern = t;
            if (pattern.contains("%c")) {
                if (!safe(clientId)) {
                    continue;
                }
                pattern = pattern.replace("%c", clientId);
            }
            if (pattern.contains("%u")) {
                if (!safe(username)) {
                    continue;
                }
                pattern = pattern.replace("%u", username);
            }
            out.add(pattern);
        }
        return List.copyOf(out);
    }

    private static boolean safe(String value) {
        return value != null && !value.isEmpty() && value.indexOf('+') < 0 && value.indexOf('#') < 0
                && value.indexOf('/') < 0;
    }

    public boolean canPublish(String topic) {
        for (String pattern : publish) {
            if (Topics.matches(pattern, topic)) {
                return true;
            }
        }
        return false;
    }

    /** A subscription is allowed when one pattern covers its whole filter (the part after $share/group/). */
    public boolean canSubscribe(TopicFilter filter) {
        for (String pattern : subscribe) {
            if (Topics.covers(pattern, filter.filter())) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "publish " + publish + ", subscribe " + subscribe;
    }
}
