package io.tbmq.broker.session;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.subscription.SubscriptionTrie;

/**
 * All sessions of this node by client id: opening (clean start, resumption, takeover), the
 * expiry of disconnected sessions, and their end. Operations on one client id are serialised by
 * a lock stripe so a connect racing a disconnect or an expiry sees one consistent order.
 */
public final class SessionRegistry {
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    /**
     * A connect raises a session's version by two, an adoption of a dead node's session by one
     * ({@link SessionState#adoptedBy}): a client that reconnected somewhere wins over a caretaker
     * that adopted the same session from the same record.
     */
    static final long CONNECT_STEP = 2;
    private final ConcurrentHashMap<String, Session> sessions = new ConcurrentHashMap<>();
    private final ReentrantLock[] stripes = new ReentrantLock[64];
    private final SubscriptionTrie trie;
    private final ScheduledExecutorService timers;
    private final int maxQueued;
    private final boolean queueQos0Offline;
    private final Session.DropCounter drops;
    private final SessionListener listener;

    /**
     * Told when a session ends: a pending delayed Will is published then (§3.1.2.5), stored
     * messages are deleted. The future completes when that cleanup is done.
     */
    public interface SessionListener {
        CompletableFuture<Void> sessionEnded(Session session);

        /** The client's session moved to another node: nothing of it runs here any more (a delayed Will). */
        default void sessionMoved(String clientId) {
        }
    }

    /** @param previousEnded completes when the cleanup of a session this one replaced is done */
    public record Opened(Session session, boolean present, CompletableFuture<Void> previousEnded) {
    }

    private final SessionStore store;
    private final SessionJournal journal;
    private final RemoteSessions remote;

    /**
     * @param journal where this node announces its sessions to the others
     * @param remote the sessions other nodes hold, resumable here
     */
    public SessionRegistry(SubscriptionTrie trie, ScheduledExecutorService timers, int maxQueued,
            boolean queueQos0Offline, Session.DropCounter drops, SessionListener listener, SessionStore store,
            SessionJournal journal, RemoteSessions remote) {
        this.store = java.util.Objects.requireNonNull(store, "store");
        this.journal = journal;
        this.remote = remote;
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

    public SessionJournal journal() {
        return journal;
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
                // The previous connection (attached, or still finishing its own CONNECT) is taken over.
                DeliverySink previous = existing.claim(newSink);
                if (previous != null) {
                    previous.takenOver(cleanStart);
                }
                if (!cleanStart && !existing.isEnded()) {
                    existing.expiryIntervalSeconds(expiryIntervalSeconds);
                    existing.expiryTimer(null);
                    existing.version(existing.version() + CONNECT_STEP);
                    return new Opened(existing, true, DONE);
                }
                CompletableFuture<Void> ended = endLocked(existing);
                return opened(create(clientId, expiryIntervalSeconds, existing.version() + CONNECT_STEP), newSink, false, ended);
            }
            SessionState elsewhere = remote.find(clientId);
            if (elsewhere == null) {
                return opened(create(clientId, expiryIntervalSeconds, 1), newSink, false, DONE);
            }
            // The client was last on another node: that node lets go when it reads our record.
            if (!cleanStart && elsewhere.persistent()) {
                // Held here before the remote record goes: a message routed meanwhile finds one or the other.
                Session moved = adopt(elsewhere);
                moved.expiryIntervalSeconds(expiryIntervalSeconds);
                moved.version(elsewhere.version() + CONNECT_STEP);
                remote.claim(clientId, moved);
                return opened(moved, newSink, true, DONE);
            }
            remote.claim(clientId, null);
            Session replaced = ghost(elsewhere);
            replaced.end();
            CompletableFuture<Void> ended = listener.sessionEnded(replaced);
            return opened(create(clientId, expiryIntervalSeconds, elsewhere.version() + CONNECT_STEP), newSink, false, ended);
        } finally {
            lock.unlock();
        }
    }

    private static Opened opened(Session session, DeliverySink owner, boolean present, CompletableFuture<Void> previousEnded) {
        session.claim(owner);
        return new Opened(session, present, previousEnded);
    }

    /** A session another node held, recreated here with its identity and subscriptions. */
    private Session adopt(SessionState state) {
        Session session = ghost(state);
        for (SessionState.Sub sub : state.subscriptions()) {
            io.tbmq.broker.topic.TopicFilter filter = io.tbmq.broker.topic.Topics.parseFilter(sub.filter(), Integer.MAX_VALUE);
            trie.subscribe(state.clientId(), filter, sub.options());
            session.subscriptions().put(filter.key(), new Session.SubscriptionEntry(filter, sub.options()));
        }
        sessions.put(state.clientId(), session);
        return session;
    }

    private Session ghost(SessionState state) {
        Session session = new Session(state.clientId(), state.epoch(), state.expiryIntervalSeconds(), maxQueued, queueQos0Offline,
                drops);
        session.store(store);
        session.persistence(state.persistence());
        session.version(state.version());
        // What another node sent is only known to the store: DUP is judged from its marker.
        session.restoredAfterRestart();
        return session;
    }

    /**
     * Another node wrote a newer record of a client this node holds: the client connected there.
     * Its connection here (if any) is told DISCONNECT 0x8E; the session leaves this node without
     * ending (its stored messages, subscriptions and Will belong to the new holder). {@code
     * handOver} records the new holder (and its subscriptions) first, so a message routed
     * meanwhile finds the client here or there, never nowhere. Returns whether a session was let go.
     */
    public boolean movedAway(SessionState newer, String thisNode, Runnable handOver) {
        ReentrantLock lock = lock(newer.clientId());
        lock.lock();
        try {
            Session local = sessions.get(newer.clientId());
            if (local == null || !newer.supersedes(local.version(), thisNode)) {
                return false;
            }
            handOver.run();
            sessions.remove(local.clientId(), local);
            java.util.Set<String> kept = new java.util.HashSet<>();
            for (SessionState.Sub sub : newer.subscriptions()) {
                kept.add(io.tbmq.broker.topic.Topics.parseFilter(sub.filter(), Integer.MAX_VALUE).key());
            }
            for (Session.SubscriptionEntry entry : local.subscriptions().values()) {
                if (!kept.contains(entry.filter().key())) {
                    trie.unsubscribe(local.clientId(), entry.filter());
                }
            }
            DeliverySink connection = local.owner();
            local.expiryTimer(null);
            local.end();
            if (connection != null) {
                local.detach(connection);
                connection.takenOver(newer.epoch() != local.epoch());
            }
            listener.sessionMoved(local.clientId());
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * An administrator disconnects a client held here (the admin API). Its connection, if any, is
     * told DISCONNECT 0x98 and closes as any close by the server does (its Will goes out, a
     * persistent session stays). With {@code clear} the session ends as well: its subscriptions, its
     * stored messages and its directory entry go. {@code epoch} 0 stands for whichever session is
     * here. Returns whether there was such a session.
     */
    public boolean disconnectByAdmin(String clientId, long epoch, boolean clear) {
        ReentrantLock lock = lock(clientId);
        lock.lock();
        try {
            Session session = sessions.get(clientId);
            if (session == null || (epoch != 0 && session.epoch() != epoch)) {
                return false;
            }
            DeliverySink connection = session.owner();
            if (clear) {
                session.expiryTimer(null);
                if (connection != null) {
                    session.detach(connection);
                }
                endLocked(session);
            }
            if (connection != null) {
                connection.disconnectedByAdmin();
            }
            return true;
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
            } else {
                journal.saved(session, System.currentTimeMillis());
                scheduleExpiry(session, expiry * 1000);
            }
        } finally {
            lock.unlock();
        }
    }

    private void scheduleExpiry(Session session, long millis) {
        if (session.expiryIntervalSeconds() < 0xFFFFFFFFL) {
            session.expiryTimer(timers.schedule(() -> expire(session), Math.max(0, millis), TimeUnit.MILLISECONDS));
        }
    }

    /**
     * A persistent session read back after a restart: offline, its subscriptions back in the trie,
     * expiring when it would have had the broker not stopped (from its disconnect, or from now if
     * it was connected when the broker died).
     */
    public Session restore(SessionState state, long nowMillis) {
        ReentrantLock lock = lock(state.clientId());
        lock.lock();
        try {
            Session existing = sessions.get(state.clientId());
            if (existing != null) {
                // The client reconnected here meanwhile: that session is newer.
                return existing;
            }
            Session session = adopt(state);
            session.version(state.version());
            long since = state.connected() || state.disconnectedAtMillis() == 0 ? nowMillis : state.disconnectedAtMillis();
            long remaining = state.expiryIntervalSeconds() * 1000 - (nowMillis - since);
            if (state.connected() || state.disconnectedAtMillis() == 0) {
                journal.saved(session, nowMillis);
            }
            scheduleExpiry(session, remaining);
            return session;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes over a persistent session of a node that died or left, offline, and announces it as
     * held here; unless the client is held here already (it reconnected to this node since its
     * old node's sessions were listed): its connect announced the truth, and null is returned.
     * Under the client's lock, so a connect here comes entirely before or after.
     */
    public Session adoptOrphan(SessionState adopted, long nowMillis) {
        ReentrantLock lock = lock(adopted.clientId());
        lock.lock();
        try {
            if (sessions.get(adopted.clientId()) != null) {
                return null;
            }
            Session session = restore(adopted, nowMillis);
            journal.saved(session, adopted.disconnectedAtMillis());
            return session;
        } finally {
            lock.unlock();
        }
    }

    /** Ends a non-persistent session of a node that died or left, unless the client is held here already; returns whether it ended. */
    public boolean endOrphan(String clientId) {
        ReentrantLock lock = lock(clientId);
        lock.lock();
        try {
            if (sessions.get(clientId) != null) {
                return false;
            }
            journal.ended(clientId);
            return true;
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

    private Session create(String clientId, long expiryIntervalSeconds, long version) {
        Session created = new Session(clientId, expiryIntervalSeconds, maxQueued, queueQos0Offline, drops);
        created.store(store);
        created.version(version);
        sessions.put(clientId, created);
        return created;
    }

    private CompletableFuture<Void> endLocked(Session session) {
        sessions.remove(session.clientId(), session);
        for (Session.SubscriptionEntry entry : session.subscriptions().values()) {
            trie.unsubscribe(session.clientId(), entry.filter());
        }
        session.subscriptions().clear();
        session.end();
        // Every session is in the cluster's directory while it lives, so every end is recorded.
        journal.ended(session.clientId());
        return listener.sessionEnded(session);
    }
}
