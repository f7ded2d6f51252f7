package io.tbmq.broker.persistence;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionStore;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Persistent DEVICE sessions in Redis: a reconnect loads what is stored, PUBACK and PUBCOMP remove
 * (gathered for a flush interval), PUBREC marks released, a gap is filled from Redis, and the
 * session's end clears its keys. The messages themselves are written by the routing consumer
 * ({@link DeviceWrites}). A removal that fails is tried again for a while, then given up: the
 * message then comes again after a reconnect, with DUP.
 */
public final class DeviceSessionStore implements SessionStore {
    private static final Logger LOG = Logger.getLogger(DeviceSessionStore.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);
    private static final RateLimitedLog GAPS = new RateLimitedLog(LOG, 1);
    /** How long a session holds messages past a gap before it loads the store (a downlink hop takes tens of ms). */
    static final long GAP_GRACE_MILLIS = 250;
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final DeviceMessageStore devices;
    private final DeviceSessionLoader loader;

    /** {@code recheckAfterReconnect}: when the store is looked at again after a reconnect's load (zero: never). */
    public DeviceSessionStore(DeviceMessageStore devices, Duration recheckAfterReconnect) {
        this.devices = devices;
        this.loader = new DeviceSessionLoader(devices, recheckAfterReconnect);
    }

    @Override
    public CompletableFuture<Void> prepare(Session session) {
        return DONE;
    }

    @Override
    public boolean attach(Session session, DeliverySink target) {
        return loader.restore(session, target);
    }

    @Override
    public void detach(Session session, DeliverySink target) {
    }

    @Override
    public void acknowledged(Session session, int packetId, long score) {
        devices.acknowledge(session.clientId(), packetId);
    }

    @Override
    public void released(Session session, int packetId, long score) {
        devices.release(session.clientId(), packetId).whenComplete((v, e) -> {
            if (e != null) {
                FAILED.info("store update for %s failed: %s", LogText.of(session.clientId()), e.getMessage());
            }
        });
    }

    @Override
    public void moved(String clientId) {
        // The new holder may clear the session: a late removal from here must not hit its next one.
        devices.letGo(clientId);
    }

    @Override
    public boolean fillsGaps() {
        return true;
    }

    @Override
    public void missed(Session session) {
        // Usually the gap is another node's message still on its way through the downlink topic:
        // give it time to arrive before asking Redis.
        DeviceSessionLoader.after(GAP_GRACE_MILLIS, TimeUnit.MILLISECONDS).execute(() -> {
            if (session.requestFill()) {
                GAPS.info("stored messages of %s arrived past a gap that did not fill within %d ms; filling it from Redis",
                        LogText.of(session.clientId()), GAP_GRACE_MILLIS);
                loader.catchUp(session);
            }
        });
    }

    @Override
    public void recheck(Session session) {
        loader.catchUp(session);
    }

    @Override
    public CompletableFuture<Void> ended(Session session) {
        return devices.clear(session.clientId()).thenApply(v -> null);
    }
}
