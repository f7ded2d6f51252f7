package io.tbmq.broker.auth;

import java.util.ArrayList;
import java.util.List;

import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.topic.TopicFilter;
import io.tbmq.broker.topic.Topics;

/**
 * What one connected client may publish to, subscribe to and receive: allow and deny topic
 * patterns (deny wins), with {@code %c} and {@code %u} already replaced by its client id and user
 * name. A subscription must be covered by an allow pattern and by no deny pattern; messages on
 * denied topics are also withheld at delivery, so a wide subscription ({@code #}) cannot read
 * around a deny rule.
 */
public final class Acl {
    public static final Acl ALLOW_ALL = new Acl(List.of("#"), List.of("#"), List.of(), List.of());

    private final List<String> publish;
    private final List<String> subscribe;
    private final List<String> denyPublish;
    private final List<String> denySubscribe;
    /** The same patterns split into levels once, since publish checks run per message. */
    private final String[][] publishLevels;
    private final String[][] denyPublishLevels;
    private final String[][] denySubscribeLevels;
    private final boolean publishAnything;

    private Acl(List<String> publish, List<String> subscribe, List<String> denyPublish, List<String> denySubscribe) {
        this.publish = publish;
        this.subscribe = subscribe;
        this.denyPublish = denyPublish;
        this.denySubscribe = denySubscribe;
        this.publishLevels = split(publish);
        this.denyPublishLevels = split(denyPublish);
        this.denySubscribeLevels = split(denySubscribe);
        this.publishAnything = publish.contains("#") && denyPublish.isEmpty();
    }

    private static String[][] split(List<String> patterns) {
        String[][] out = new String[patterns.size()][];
        for (int i = 0; i < out.length; i++) {
            out[i] = patterns.get(i).split("/", -1);
        }
        return out;
    }

    /**
     * Instantiates an entry's templates for one client. An allow template whose placeholder would
     * receive a value containing {@code +}, {@code #} or {@code /} (or an empty one) is dropped,
     * and such a deny template becomes a deny of everything: a client must not change its rights
     * by choosing its id.
     */
    public static Acl forClient(CredentialsFile.Grants grants, String clientId, String username) {
        return new Acl(instantiate(grants.publish(), clientId, username, false),
                instantiate(grants.subscribe(), clientId, username, false),
                instantiate(grants.denyPublish(), clientId, username, true),
                instantiate(grants.denySubscribe(), clientId, username, true));
    }

    private static List<String> instantiate(List<String> templates, String clientId, String username, boolean deny) {
        if (templates == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>(templates.size());
        for (String t : templates) {
            String pattern = substitute(substitute(t, "%c", clientId), "%u", username);
            if (pattern != null) {
                out.add(pattern);
            } else if (deny) {
                out.add("#");
            }
        }
        return List.copyOf(out);
    }

    private static String substitute(String template, String placeholder, String value) {
        if (template == null || !template.contains(placeholder)) {
            return template;
        }
        boolean safe = value != null && !value.isEmpty() && value.indexOf('+') < 0 && value.indexOf('#') < 0
                && value.indexOf('/') < 0;
        return safe ? template.replace(placeholder, value) : null;
    }

    public boolean canPublish(String topic) {
        if (publishAnything) {
            return true;
        }
        String[] levels = SubscriptionTrie.splitTopic(topic);
        return anyMatches(publishLevels, levels) && !anyMatches(denyPublishLevels, levels);
    }

    /** Judged on the filter after {@code $share/<group>/}. */
    public boolean canSubscribe(TopicFilter filter) {
        return anyCovers(subscribe, filter.filter()) && !anyCovers(denySubscribe, filter.filter());
    }

    /** Whether a message on {@code topic} may be delivered to this client (checked only when deny rules exist). */
    public boolean canReceive(String topic) {
        return denySubscribeLevels.length == 0 || !anyMatches(denySubscribeLevels, SubscriptionTrie.splitTopic(topic));
    }

    /** The client's deny-subscribe patterns (placeholders replaced): what it may never receive. */
    public List<String> denySubscribe() {
        return denySubscribe;
    }

    /** Delivery rules of a client known from its session record on another node. */
    public static Acl receiveDenied(List<String> denySubscribe) {
        return new Acl(List.of("#"), List.of("#"), List.of(), List.copyOf(denySubscribe));
    }

    public boolean restrictsDelivery() {
        return !denySubscribe.isEmpty();
    }

    private static boolean anyMatches(String[][] patterns, String[] topic) {
        for (String[] pattern : patterns) {
            if (Topics.matchesLevels(pattern, topic)) {
                return true;
            }
        }
        return false;
    }

    private static boolean anyCovers(List<String> patterns, String filter) {
        for (String pattern : patterns) {
            if (Topics.covers(pattern, filter)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "publish " + publish + " deny " + denyPublish + ", subscribe " + subscribe + " deny " + denySubscribe;
    }
}
