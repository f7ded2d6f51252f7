package io.tbmq.broker.persistence;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Acknowledgements of stored messages, passed to their store: Redis for DEVICE sessions (remove on
 * PUBACK/PUBCOMP, release on PUBREC), the application consumer for APPLICATION sessions (commit).
 * A failed Redis call is logged: the message is then delivered again after a reconnect, with DUP.
 * A gap in a DEVICE session's stored messages is filled from Redis (see {@link Session#catchUp}).
 */
public final class StoreHooks implements Session.StoreHooks {
    private static final Logger LOG = Logger.getLogger(StoreHooks.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);
    private static final RateLimitedLog GAPS = new RateLimitedLog(LOG, 1);
    /** How long a session holds messages past a gap before it loads the store (a downlink hop takes tens of ms). */
    static final long GAP_GRACE_MILLIS = 250;

    private final DeviceMessageStore devices;
    private final ApplicationStore applications;

    public StoreHooks(DeviceMessageStore devices, ApplicationStore applications) {
        this.devices = devices;
        this.applications = applications;
    }

    @Override
    public void acknowledged(Session session, int packetId, long score) {
        if (session.persistence() == io.tbmq.broker.record.Persistence.APPLICATION) {
            applications.acknowledged(session.clientId(), score);
        } else if (devices != null) {
            devices.acknowledge(session.clientId(), packetId);
        }
    }

    @Override
    public void released(Session session, int packetId, long score) {
        if (session.persistence() != io.tbmq.broker.record.Persistence.APPLICATION && devices != null) {
            devices.release(session.clientId(), packetId).whenComplete((v, e) -> failed(e, session));
        }
    }

    @Override
    public void missed(Session session) {
        if (devices != null) {
            // Usually the gap is another node's message still on its way through the downlink topic:
            // give it time to arrive before asking Redis.
            CompletableFuture.delayedExecutor(GAP_GRACE_MILLIS, TimeUnit.MILLISECONDS).execute(() -> {
                if (session.requestFill()) {
                    GAPS.info("stored messages of %s arrived past a gap that did not fill within %d ms; filling it from Redis",
                            session.clientId(), GAP_GRACE_MILLIS);
                    fill(session);
                }
            });
        }
    }

    @Override
    public void recheck(Session session) {
        if (devices != null) {
            fill(session);
        }
    }

    private void fill(Session session) {
        devices.load(session.clientId()).whenComplete((loaded, error) -> {
            if (error == null) {
                LoadedMessages stored = LoadedMessages.of(session.clientId(), loaded, session.dupThreshold(loaded.deliveredScore()));
                // Released ones are in flight already (their PUBREC came on this connection).
                int found = session.catchUp(stored.messages(), stored.lastScore());
                if (found > 0) {
                    GAPS.info("%d stored messages of %s found in Redis above what it was sent; sending them", found, session.clientId());
                }
            } else if (session.catchingUp() && session.isConnected()) {
                FAILED.info("catching up %s from Redis failed, retrying: %s", session.clientId(), error.getMessage());
                CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> {
                    if (session.catchingUp()) {
                        fill(session);
                    }
                });
            } else {
                session.abandonCatchUp();
            }
        });
    }

    private static void failed(Throwable e, Session session) {
        if (e != null) {
            FAILED.info("store update for %s failed: %s", session.clientId(), e.getMessage());
        }
    }
}
