package io.tbmq.broker.subscription;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.topic.TopicFilter;

/**
 * The subscription index: a trie of filter levels, matched against every routed message.
 *
 * <p>Matching is lock-free (concurrent maps, read by the Kafka consumer threads); changes take a
 * single lock, since subscribe and unsubscribe are rare next to matching and the lock makes
 * pruning of empty branches safe.
 */
public final class SubscriptionTrie {
    private final Node root = new Node();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final AtomicInteger size = new AtomicInteger();

    /** Adds or replaces a subscription; returns whether the client already had one for this filter. */
    public boolean subscribe(String clientId, TopicFilter filter, SubscriptionOptions options) {
        writeLock.lock();
        try {
            Node node = root;
            for (String level : filter.levels()) {
                node = node.children.computeIfAbsent(level, k -> new Node());
            }
            boolean existed;
            if (filter.isShared()) {
                SharedGroup group = node.groups.computeIfAbsent(filter.shareGroup(), g -> new SharedGroup());
                List<Map.Entry<String, SubscriptionOptions>> members = new ArrayList<>(group.members);
                existed = members.removeIf(e -> e.getKey().equals(clientId));
                members.add(new AbstractMap.SimpleImmutableEntry<>(clientId, options));
                group.members = List.copyOf(members);
            } else {
                existed = node.subscribers.put(clientId, options) != null;
            }
            if (!existed) {
                size.incrementAndGet();
            }
            return existed;
        } finally {
            writeLock.unlock();
        }
    }

    /** Removes a subscription; returns whether it existed. */
    public boolean unsubscribe(String clientId, TopicFilter filter) {
        writeLock.lock();
        try {
            Node[] path = new Node[filter.levels().length + 1];
            path[0] = root;
            for (int i = 0; i < filter.levels().length; i++) {
                Node next = path[i].children.get(filter.levels()[i]);
                if (next == null) {
                    return false;
                }
                path[i + 1] = next;
            }
            Node node = path[path.length - 1];
            boolean removed;
            if (filter.isShared()) {
                SharedGroup group = node.groups.get(filter.shareGroup());
                if (group == null) {
                    return false;
                }
                List<Map.Entry<String, SubscriptionOptions>> members = new ArrayList<>(group.members);
                removed = members.removeIf(e -> e.getKey().equals(clientId));
                group.members = List.copyOf(members);
                if (members.isEmpty()) {
                    node.groups.remove(filter.shareGroup());
                }
            } else {
                removed = node.subscribers.remove(clientId) != null;
            }
            if (removed) {
                size.decrementAndGet();
                prune(path, filter.levels());
            }
            return removed;
        } finally {
            writeLock.unlock();
        }
    }

    private static void prune(Node[] path, String[] levels) {
        for (int i = path.length - 1; i > 0; i--) {
            if (!path[i].isEmpty()) {
                return;
            }
            path[i - 1].children.remove(levels[i - 1], path[i]);
        }
    }

    public int size() {
        return size.get();
    }

    /**
     * The clients a message on {@code topic} goes to: one entry per client for its ordinary
     * subscriptions (merged), plus one member per matching shared group. A No Local subscription
     * of the publisher itself is skipped [MQTT-3.8.3-3].
     */
    public List<Subscriber> match(String topic, String publisherId, Predicate<String> connected) {
        Collector collector = new Collector(publisherId, connected);
        String[] levels = splitTopic(topic);
        walk(root, levels, 0, topic.startsWith("$"), collector);
        if (collector.shared != null) {
            collector.result.addAll(collector.shared);
        }
        return collector.result;
    }

    private static void walk(Node node, String[] levels, int i, boolean dollar, Collector c) {
        if (i == levels.length) {
            c.add(node);
            Node hash = node.children.get("#");
            if (hash != null) {
                c.add(hash);
            }
            return;
        }
        // Wildcards in the first level never match a topic starting with $ [MQTT-4.7.2-1].
        if (i > 0 || !dollar) {
            Node hash = node.children.get("#");
            if (hash != null) {
                c.add(hash);
            }
            Node plus = node.children.get("+");
            if (plus != null) {
                walk(plus, levels, i + 1, dollar, c);
            }
        }
        Node literal = node.children.get(levels[i]);
        if (literal != null) {
            walk(literal, levels, i + 1, dollar, c);
        }
    }

    public static String[] splitTopic(String topic) {
        int count = 1;
        for (int i = 0; i < topic.length(); i++) {
            if (topic.charAt(i) == '/') {
                count++;
            }
        }
        String[] levels = new String[count];
        int start = 0;
        int n = 0;
        for (int i = 0; i < topic.length(); i++) {
            if (topic.charAt(i) == '/') {
                levels[n++] = topic.substring(start, i);
                start = i + 1;
            }
        }
        levels[n] = topic.substring(start);
        return levels;
    }

    private static final class Node {
        final ConcurrentHashMap<String, Node> children = new ConcurrentHashMap<>(2);
        final ConcurrentHashMap<String, SubscriptionOptions> subscribers = new ConcurrentHashMap<>(2);
        final ConcurrentHashMap<String, SharedGroup> groups = new ConcurrentHashMap<>(1);

        boolean isEmpty() {
            return children.isEmpty() && subscribers.isEmpty() && groups.isEmpty();
        }
    }

    /** Gathers matches; most topics match one client, so a list comes first and a map only past a few. */
    private static final class Collector {
        private final String publisherId;
        private final Predicate<String> connected;
        final List<Subscriber> result = new ArrayList<>(2);
        List<Subscriber> shared;
        private Map<String, Subscriber> index;

        Collector(String publisherId, Predicate<String> connected) {
            this.publisherId = publisherId;
            this.connected = connected;
        }

        void add(Node node) {
            if (!node.subscribers.isEmpty()) {
                for (Map.Entry<String, SubscriptionOptions> e : node.subscribers.entrySet()) {
                    SubscriptionOptions options = e.getValue();
                    if (options.noLocal() && e.getKey().equals(publisherId)) {
                        continue;
                    }
                    Subscriber existing = find(e.getKey());
                    if (existing != null) {
                        existing.merge(options);
                    } else {
                        Subscriber s = new Subscriber(e.getKey(), options);
                        result.add(s);
                        if (index != null) {
                            index.put(s.clientId(), s);
                        }
                    }
                }
            }
            if (!node.groups.isEmpty()) {
                for (SharedGroup group : node.groups.values()) {
                    Map.Entry<String, SubscriptionOptions> member = group.pick(connected);
                    if (member != null) {
                        // Shared deliveries are separate copies, never merged with ordinary ones.
                        if (shared == null) {
                            shared = new ArrayList<>(1);
                        }
                        shared.add(new Subscriber(member.getKey(), member.getValue()));
                    }
                }
            }
        }

        private Subscriber find(String clientId) {
            if (index != null) {
                return index.get(clientId);
            }
            for (Subscriber s : result) {
                if (s.clientId().equals(clientId)) {
                    return s;
                }
            }
            if (result.size() >= 8) {
                index = new HashMap<>();
                for (Subscriber s : result) {
                    index.putIfAbsent(s.clientId(), s);
                }
            }
            return null;
        }
    }
}
