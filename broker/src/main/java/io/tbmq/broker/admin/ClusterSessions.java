package io.tbmq.broker.admin;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.cluster.AdminCommand;
import io.tbmq.broker.cluster.ClusterDirectory;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;

/**
 * The sessions of the whole cluster as this node knows them: its own, and the other nodes' from
 * the session directory every node reads (tbmq.client.session). A client held by another node is
 * disconnected by an {@link AdminCommand} in that node's downlink topic.
 */
public final class ClusterSessions {

    /** Puts a command into a node's downlink topic. */
    public interface CommandSender {
        CompletableFuture<Void> send(String node, String clientId, byte[] command);
    }

    /**
     * One session. {@code persistence}: MEMORY (ends with its connection or expiry, messages in memory),
     * DEVICE (messages in Redis) or APPLICATION (messages in its Kafka topic). {@code queued}: messages
     * waiting in memory or in flight, known only for sessions of the answering node.
     */
    public record Summary(String clientId, String node, boolean connected, String persistence, int subscriptions, Integer queued) {
    }

    public record Subscription(String filter, int qos, boolean noLocal, boolean retainAsPublished, int retainHandling,
            Integer subscriptionId) {
        static Subscription of(String filter, SubscriptionOptions o) {
            return new Subscription(filter, o.qos(), o.noLocal(), o.retainAsPublished(), o.retainHandling(),
                    o.subscriptionId() == 0 ? null : o.subscriptionId());
        }
    }

    public record Detail(String clientId, String node, boolean connected, String persistence, long expiryIntervalSeconds,
            Integer queued, List<Subscription> subscriptions) {
    }

    /** What a disconnect did: {@code node} holds the client; {@code wasConnected} whether a connection was closed. */
    public record Disconnected(String clientId, String node, boolean wasConnected, boolean cleared) {
    }

    private final String node;
    private final SessionRegistry local;
    private final ClusterDirectory directory;
    private final CommandSender sender;

    public ClusterSessions(String node, SessionRegistry local, ClusterDirectory directory, CommandSender sender) {
        this.node = node;
        this.local = local;
        this.directory = directory;
        this.sender = sender;
    }

    /** Sessions by client id, after {@code after} (exclusive, null from the start), at most {@code limit}. */
    public List<Summary> list(Boolean connected, String after, int limit) {
        TreeMap<String, Summary> all = new TreeMap<>();
        for (SessionState s : directory.all()) {
            all.put(s.clientId(), new Summary(s.clientId(), s.node(), s.connected(), s.persistence().name(), s.subscriptions().size(),
                    null));
        }
        for (Session s : local.all()) {
            all.put(s.clientId(), summary(s));
        }
        List<Summary> out = new ArrayList<>();
        for (Summary s : (after == null ? all : all.tailMap(after, false)).values()) {
            if (out.size() >= limit) {
                break;
            }
            if (connected == null || connected == s.connected()) {
                out.add(s);
            }
        }
        return out;
    }

    public int size() {
        return local.size() + directory.size();
    }

    public Optional<Detail> get(String clientId) {
        Session s = local.get(clientId);
        if (s != null) {
            List<Subscription> subs = s.subscriptions().values().stream()
                    .map(e -> Subscription.of(e.filter().raw(), e.options())).sorted(java.util.Comparator.comparing(Subscription::filter))
                    .toList();
            return Optional.of(new Detail(clientId, node, s.isConnected(), s.persistence().name(), s.expiryIntervalSeconds(),
                    s.queuedCount() + s.inflightCount(), subs));
        }
        SessionState r = directory.find(clientId);
        if (r == null) {
            return Optional.empty();
        }
        List<Subscription> subs = r.subscriptions().stream().map(sub -> Subscription.of(sub.filter(), sub.options()))
                .sorted(java.util.Comparator.comparing(Subscription::filter)).toList();
        return Optional.of(new Detail(clientId, r.node(), r.connected(), r.persistence().name(), r.expiryIntervalSeconds(), null, subs));
    }

    /**
     * Disconnects a client wherever it is held; with {@code clear} its session ends too. Empty when no node
     * holds a session of that client. Completes once done here, or once the command is in the holding node's
     * downlink topic (it acts within moments).
     */
    public Optional<CompletableFuture<Disconnected>> disconnect(String clientId, boolean clear) {
        Session s = local.get(clientId);
        if (s != null) {
            boolean wasConnected = s.isConnected();
            if (!local.disconnectByAdmin(clientId, s.epoch(), clear)) {
                return Optional.empty();
            }
            return Optional.of(CompletableFuture.completedFuture(new Disconnected(clientId, node, wasConnected, clear)));
        }
        SessionState r = directory.find(clientId);
        if (r == null) {
            return Optional.empty();
        }
        return Optional.of(sender.send(r.node(), clientId, new AdminCommand(r.epoch(), clear).encode())
                .thenApply(v -> new Disconnected(clientId, r.node(), r.connected(), clear)));
    }

    private Summary summary(Session s) {
        return new Summary(s.clientId(), node, s.isConnected(), s.persistence().name(), s.subscriptions().size(),
                s.queuedCount() + s.inflightCount());
    }
}
