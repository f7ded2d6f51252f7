package io.tbmq.broker.persistence;

import org.jboss.logging.Logger;

import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Acknowledgements of stored messages, passed to their store: Redis for DEVICE sessions (remove on
 * PUBACK/PUBCOMP, release on PUBREC), the application consumer for APPLICATION sessions (commit).
 * A failed Redis call is logged: the message is then delivered again after a reconnect, with DUP.
 */
public final class StoreHooks implements Session.StoreHooks {
    private static final Logger LOG = Logger.getLogger(StoreHooks.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);

    private final DeviceMessageStore devices;
    private final ApplicationSessions applications;

    public StoreHooks(DeviceMessageStore devices, ApplicationSessions applications) {
        this.devices = devices;
        this.applications = applications;
    }

    @Override
    public void acknowledged(Session session, int packetId, long score) {
        if (session.persistence() == io.tbmq.broker.session.Persistence.APPLICATION) {
            applications.acknowledged(session.clientId(), score);
        } else if (devices != null) {
            devices.remove(session.clientId(), packetId).whenComplete((v, e) -> failed(e, session));
        }
    }

    @Override
    public void released(Session session, int packetId, long score) {
        if (session.persistence() != io.tbmq.broker.session.Persistence.APPLICATION && devices != null) {
            devices.release(session.clientId(), packetId).whenComplete((v, e) -> failed(e, session));
        }
    }

    private static void failed(Throwable e, Session session) {
        if (e != null) {
            FAILED.info("store update for %s failed: %s", session.clientId(), e.getMessage());
        }
    }
}
