package io.tbmq.broker.session;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.tbmq.broker.subscription.SubscriptionTrie;

/**
 * All sessions of this node by client id: opening (clean start, resumption, takeover), the
 * expiry of disconnected sessions, and their end. Operations on one client id are serialised by
 * a lock stripe so a connect racing a disconnect or an expiry sees one consistent order.
 */
public final class SessionRegistry {
    private final ConcurrentHashMap<String, Session> sessions = new ConcurrentHashMap<>();
    private final ReentrantLock[] stripes = new ReentrantLock[64];
    private final SubscriptionTrie trie;
    private final ScheduledExecutorService timers;
    private final int maxQueued;
    private final boolean queueQos0Offline;
    private final Session.DropCounter drops;
    private final SessionListener listener;

    /** Told when a session ends, so a pending delayed Will is published then (§3.1.2.5). */
    public interface SessionListener {
        void sessionEnded(Session session);
    }

    public record Opened(Session session, boolean present) {
    }

    public SessionRegistry(SubscriptionTrie trie, ScheduledExecutorService timers, int maxQueued,
            boolean queueQos0Offline, Session.DropCounter drops, SessionListener listener) {
        this.trie = trie;
        this.timers = timers;
        this.maxQueued = maxQueued;
        this.queueQos0Offline = queueQos0Offline;
        this.drops = drops;
        this.listener = listener;
        for (int i = 0; i < stripes.length; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    private ReentrantLock lock(String clientId) {
        return stripes[(clientId.hashCode() & 0x7fffffff) % stripes.length];
    }

    public Session get(String clientId) {
        return sessions.get(clientId);
    }

    public boolean isConnected(String clientId) {
        Session s = sessions.get(clientId);
        return s != null && s.isConnected();
    }

    public int size() {
        return sessions.size();
    }

    public Collection<Session> all() {
        return sessions.values();
    }

    /**
     * Opens the session of a connecting client. An existing connection with this id is taken
     * over; with clean start the old session ends and a new one begins [MQTT-3.1.2-4], otherwise
     * it is resumed [MQTT-3.1.2-5]. The caller attaches its connection with {@link Session#resume}.
     */
    public Opened open(String clientId, boolean cleanStart, long expiryIntervalSeconds, DeliverySink newSink) {
        ReentrantLock lock = lock(clientId);
        lock.lock();
        try {
            Session existing = sessions.get(clientId);
            if (existing != null) {
                DeliverySink previous = existing.currentSink();
                if (previous != null && previous != newSink) {
                    existing.detach(previous);
                    previous.takenOver(cleanStart);
                }
                if (!cleanStart && !existing.isEnded()) {
                    existing.expiryIntervalSeconds(expiryIntervalSeconds);
                    existing.expiryTimer(null);
                    return new Opened(existing, true);
                }
                endLocked(existing);
            }
            Session created = new Session(clientId, expiryIntervalSeconds, maxQueued, queueQos0Offline, drops);
            sessions.put(clientId, created);
            return new Opened(created, false);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The connection of {@code session} closed. A session with expiry 0 ends now; otherwise it
     * ends after its expiry interval unless the client comes back [MQTT-3.1.2-23].
     */
    public void disconnected(Session session, DeliverySink sink) {
        ReentrantLock lock = lock(session.clientId());
        lock.lock();
        try {
            if (!session.detach(sink)) {
                return;
            }
            long expiry = session.expiryIntervalSeconds();
            if (expiry == 0) {
                endLocked(session);
            } else if (expiry < 0xFFFFFFFFL) {
                session.expiryTimer(timers.schedule(() -> expire(session), expiry, TimeUnit.SECONDS));
            }
        } finally {
            lock.unlock();
        }
    }

    private void expire(Session session) {
        ReentrantLock lock = lock(session.clientId());
        lock.lock();
        try {
            if (!session.isConnected() && sessions.get(session.clientId()) == session) {
                endLocked(session);
            }
        } finally {
            lock.unlock();
        }
    }

    private void endLocked(Session session) {
        sessions.remove(session.clientId(), session);
        for (Session.SubscriptionEntry entry : session.subscriptions().values()) {
            trie.unsubscribe(session.clientId(), entry.filter());
        }
        session.subscriptions().clear();
        session.end();
        listener.sessionEnded(session);
    }
}
