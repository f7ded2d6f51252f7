package io.tbmq.broker.persistence;

import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import io.tbmq.broker.auth.ClientType;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.InMemorySessionStore;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionStore;

/**
 * The stores of this node and the rule that picks one: a session with a Session Expiry Interval
 * above zero (or clean session = false in v3) is persistent, in Redis for DEVICE clients and in
 * its own Kafka topic for APPLICATION clients; any other session lives in memory. Each call goes
 * to the store of the session's kind; a session that was ever a persistent DEVICE session keeps
 * its Redis part until it ends, whatever it is now. A node without one of the stores (unit tests)
 * keeps those sessions in memory.
 */
public final class SessionStores implements SessionStore {
    public static final SessionStores NONE = new SessionStores(null, null, () -> false);

    private final SessionStore devices;
    private final SessionStore applications;
    private final BooleanSupplier deviceStoreDown;

    /** {@code devices} or {@code applications} null: the node has no such store. */
    public SessionStores(SessionStore devices, SessionStore applications, BooleanSupplier deviceStoreDown) {
        this.devices = devices != null ? devices : InMemorySessionStore.INSTANCE;
        this.applications = applications != null ? applications : InMemorySessionStore.INSTANCE;
        this.deviceStoreDown = deviceStoreDown;
    }

    public Persistence kindFor(ClientType type, long expiryIntervalSeconds) {
        if (expiryIntervalSeconds == 0) {
            return Persistence.MEMORY;
        }
        if (type == ClientType.APPLICATION && applications != InMemorySessionStore.INSTANCE) {
            return Persistence.APPLICATION;
        }
        if (type == ClientType.DEVICE && devices != InMemorySessionStore.INSTANCE) {
            return Persistence.DEVICE;
        }
        return Persistence.MEMORY;
    }

    /** Whether QoS 1 and 2 PUBLISH are refused: Redis is unreachable and the node is set to refuse then. */
    public boolean storeDown() {
        return deviceStoreDown.getAsBoolean();
    }

    private SessionStore of(Session session) {
        if (session.persistence() == Persistence.APPLICATION) {
            return applications;
        }
        return session.everDevice() ? devices : InMemorySessionStore.INSTANCE;
    }

    @Override
    public CompletableFuture<Void> prepare(Session session) {
        return of(session).prepare(session);
    }

    @Override
    public boolean attach(Session session, DeliverySink target) {
        return of(session).attach(session, target);
    }

    @Override
    public void detach(Session session, DeliverySink target) {
        of(session).detach(session, target);
    }

    @Override
    public void acknowledged(Session session, int packetId, long score) {
        of(session).acknowledged(session, packetId, score);
    }

    @Override
    public void released(Session session, int packetId, long score) {
        of(session).released(session, packetId, score);
    }

    /** Gaps are a DEVICE matter: its scores are consecutive and written by every node. */
    @Override
    public boolean fillsGaps() {
        return devices.fillsGaps();
    }

    @Override
    public void missed(Session session) {
        devices.missed(session);
    }

    @Override
    public void recheck(Session session) {
        devices.recheck(session);
    }

    @Override
    public void moved(String clientId) {
        devices.moved(clientId);
        applications.moved(clientId);
    }

    /** Deletes what the session left in every store it used; completes when done. */
    @Override
    public CompletableFuture<Void> ended(Session session) {
        CompletableFuture<Void> device = session.everDevice() ? devices.ended(session) : InMemorySessionStore.INSTANCE.ended(session);
        CompletableFuture<Void> application = session.persistence() == Persistence.APPLICATION ? applications.ended(session)
                : InMemorySessionStore.INSTANCE.ended(session);
        return CompletableFuture.allOf(device, application);
    }
}
