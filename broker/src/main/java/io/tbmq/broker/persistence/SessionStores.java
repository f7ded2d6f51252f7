package io.tbmq.broker.persistence;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import io.tbmq.broker.auth.ClientType;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.session.Session;

/**
 * The persistent stores of this node and the rule that picks one: a session with a Session Expiry
 * Interval above zero (or clean session = false in v3) is persistent, in Redis for DEVICE clients
 * and in its own Kafka topic for APPLICATION clients. Either store may be absent (unit tests).
 */
public record SessionStores(DeviceMessageStore devices, ApplicationStore applications, BooleanSupplier deviceStoreDown,
        Duration reconnectRecheck) {
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    public static final SessionStores NONE = new SessionStores(null, null, () -> false, Duration.ZERO);

    public Persistence kindFor(ClientType type, long expiryIntervalSeconds) {
        if (expiryIntervalSeconds == 0) {
            return Persistence.MEMORY;
        }
        if (type == ClientType.APPLICATION && applications != null) {
            return Persistence.APPLICATION;
        }
        if (type == ClientType.DEVICE && devices != null) {
            return Persistence.DEVICE;
        }
        return Persistence.MEMORY;
    }

    /** Deletes what a session left in the stores; completes when done. */
    public CompletableFuture<Void> ended(Session session) {
        CompletableFuture<Void> device = session.everDevice() && devices != null
                ? devices.clear(session.clientId()).thenApply(v -> null) : DONE;
        CompletableFuture<Void> application = session.persistence() == Persistence.APPLICATION && applications != null
                ? applications.ended(session.clientId()) : DONE;
        return CompletableFuture.allOf(device, application);
    }

    public boolean storeDown() {
        return deviceStoreDown.getAsBoolean();
    }
}
