package io.tbmq.broker.retain;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.topic.TopicFilter;

/**
 * Retained messages, one per topic, in a tree of topic levels so a new subscription's filter
 * finds them without scanning every topic. Bounded: beyond {@code maxMessages} new topics are
 * refused (existing ones can still be replaced or cleared).
 */
public final class RetainedStore {
    private final Node root = new Node();
    private final AtomicInteger size = new AtomicInteger();
    private final int maxMessages;

    public RetainedStore(int maxMessages) {
        this.maxMessages = maxMessages;
    }

    /** Stores the message, or clears the topic when its payload is empty [MQTT-3.3.1-6]. Returns false when full. */
    public synchronized boolean put(PublishMessage message) {
        String[] levels = SubscriptionTrie.splitTopic(message.topic());
        if (message.payload().length == 0) {
            Node node = find(levels);
            if (node != null && node.message != null) {
                node.message = null;
                size.decrementAndGet();
            }
            return true;
        }
        Node node = root;
        for (String level : levels) {
            node = node.children.computeIfAbsent(level, k -> new Node());
        }
        if (node.message == null) {
            if (size.get() >= maxMessages) {
                return false;
            }
            size.incrementAndGet();
        }
        node.message = message;
        return true;
    }

    /** Clears the retained message of {@code topic}, if any. */
    public synchronized void clear(String topic) {
        Node node = find(SubscriptionTrie.splitTopic(topic));
        if (node != null && node.message != null) {
            node.message = null;
            size.decrementAndGet();
        }
    }

    private Node find(String[] levels) {
        Node node = root;
        for (String level : levels) {
            node = node.children.get(level);
            if (node == null) {
                return null;
            }
        }
        return node;
    }

    public int size() {
        return size.get();
    }

    /** The retained messages whose topics match {@code filter}, expired ones left out and cleared. */
    public List<PublishMessage> match(TopicFilter filter) {
        List<PublishMessage> out = new ArrayList<>();
        collect(root, filter.levels(), 0, out, System.currentTimeMillis());
        return out;
    }

    private void collect(Node node, String[] levels, int i, List<PublishMessage> out, long now) {
        if (i == levels.length) {
            add(node, out, now);
            return;
        }
        String level = levels[i];
        if (level.equals("#")) {
            // "a/#" also matches "a" itself [MQTT-4.7.1-2]
            add(node, out, now);
            node.children.forEach((name, child) -> {
                if (i > 0 || !name.startsWith("$")) {
                    all(child, out, now);
                }
            });
        } else if (level.equals("+")) {
            node.children.forEach((name, child) -> {
                if (i > 0 || !name.startsWith("$")) {
                    collect(child, levels, i + 1, out, now);
                }
            });
        } else {
            Node child = node.children.get(level);
            if (child != null) {
                collect(child, levels, i + 1, out, now);
            }
        }
    }

    private void all(Node node, List<PublishMessage> out, long now) {
        add(node, out, now);
        node.children.values().forEach(child -> all(child, out, now));
    }

    private void add(Node node, List<PublishMessage> out, long now) {
        PublishMessage m = node.message;
        if (m == null) {
            return;
        }
        if (m.isExpired(now)) {
            synchronized (this) {
                if (node.message == m) {
                    node.message = null;
                    size.decrementAndGet();
                }
            }
            return;
        }
        out.add(m);
    }

    private static final class Node {
        final ConcurrentHashMap<String, Node> children = new ConcurrentHashMap<>(2);
        volatile PublishMessage message;
    }
}
