package io.tbmq.broker.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.subscription.SubscriptionTrie;
import io.tbmq.broker.topic.TopicFilter;
import io.tbmq.broker.topic.Topics;

/**
 * The sessions other nodes hold, as last read from tbmq.client.session, with their subscriptions
 * mirrored into this node's trie: a message matched here reaches every client of the cluster, and
 * the record says which node's downlink topic carries it. Updated by the session feed (one thread)
 * and by connects claiming a client (event loops); both under this object's monitor.
 */
public final class ClusterDirectory implements RemoteSessions {
    private final SubscriptionTrie trie;
    private final ConcurrentHashMap<String, SessionState> remote = new ConcurrentHashMap<>();
    /** Client ids by holding node: the caretaker looks up a dead node's clients without scanning all. */
    private final ConcurrentHashMap<String, Set<String>> byNode = new ConcurrentHashMap<>();

    public ClusterDirectory(SubscriptionTrie trie) {
        this.trie = trie;
    }

    @Override
    public SessionState find(String clientId) {
        return remote.get(clientId);
    }

    @Override
    public boolean isConnected(String clientId) {
        SessionState s = remote.get(clientId);
        return s != null && s.connected();
    }

    /** Records another node's session unless an equal or newer record of it is already here. */
    public synchronized boolean apply(SessionState state) {
        SessionState old = remote.get(state.clientId());
        if (old != null && !state.supersedes(old.version(), old.node())) {
            return false;
        }
        remote.put(state.clientId(), state);
        index(old, state);
        replaceSubscriptions(state.clientId(), old, state);
        return true;
    }

    /** The session ended (an empty record). */
    public synchronized void remove(String clientId) {
        SessionState old = remote.remove(clientId);
        if (old != null) {
            index(old, null);
            replaceSubscriptions(clientId, old, null);
        }
    }

    @Override
    public synchronized void claim(String clientId, Session holder) {
        SessionState old = remote.remove(clientId);
        if (old == null) {
            return;
        }
        index(old, null);
        for (SessionState.Sub sub : old.subscriptions()) {
            TopicFilter filter = Topics.parseFilter(sub.filter(), Integer.MAX_VALUE);
            // The trie is keyed by client id: what the local session holds stays.
            if (holder == null || !holder.subscriptions().containsKey(filter.key())) {
                trie.unsubscribe(clientId, filter);
            }
        }
    }

    /** Sessions held by {@code node}. */
    public synchronized List<SessionState> heldBy(String node) {
        List<SessionState> out = new ArrayList<>();
        for (String clientId : byNode.getOrDefault(node, Set.of())) {
            SessionState s = remote.get(clientId);
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    /** Every node that holds at least one session, with how many. */
    public Map<String, Integer> nodes() {
        Map<String, Integer> out = new HashMap<>();
        byNode.forEach((node, clients) -> out.put(node, clients.size()));
        return out;
    }

    private void index(SessionState old, SessionState now) {
        if (old != null && (now == null || !old.node().equals(now.node()))) {
            Set<String> clients = byNode.get(old.node());
            if (clients != null) {
                clients.remove(old.clientId());
                if (clients.isEmpty()) {
                    byNode.remove(old.node());
                }
            }
        }
        if (now != null) {
            byNode.computeIfAbsent(now.node(), n -> ConcurrentHashMap.newKeySet()).add(now.clientId());
        }
    }

    /** Every session other nodes hold, as last read. */
    public java.util.Collection<SessionState> all() {
        return java.util.Collections.unmodifiableCollection(remote.values());
    }

    public int size() {
        return remote.size();
    }

    private void replaceSubscriptions(String clientId, SessionState old, SessionState now) {
        Map<String, TopicFilter> keep = new HashMap<>();
        if (now != null) {
            for (SessionState.Sub sub : now.subscriptions()) {
                TopicFilter filter = Topics.parseFilter(sub.filter(), Integer.MAX_VALUE);
                keep.put(filter.key(), filter);
                trie.subscribe(clientId, filter, sub.options());
            }
        }
        if (old != null) {
            for (SessionState.Sub sub : old.subscriptions()) {
                TopicFilter filter = Topics.parseFilter(sub.filter(), Integer.MAX_VALUE);
                if (!keep.containsKey(filter.key())) {
                    trie.unsubscribe(clientId, filter);
                }
            }
        }
    }
}
