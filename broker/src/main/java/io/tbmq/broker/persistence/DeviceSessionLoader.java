package io.tbmq.broker.persistence;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Loads a DEVICE session's stored messages from Redis into the session, the one way there is: on
 * a reconnect, where the store replaces what memory held ({@link #restore}), and to fill a gap or
 * recheck while the client is connected, where what is above the session's last score is queued
 * ({@link #catchUp}). Either way DUP is set on what was sent before.
 */
final class DeviceSessionLoader {
    private static final Logger LOG = Logger.getLogger(DeviceSessionLoader.class);
    private static final RateLimitedLog NOT_LOADED = new RateLimitedLog(LOG, 2);
    private static final RateLimitedLog CATCH_UP = new RateLimitedLog(LOG, 1);

    private final DeviceMessageStore devices;
    /** How long after a reconnect the store is looked at again; zero: not at all. */
    private final Duration recheckAfterReconnect;

    DeviceSessionLoader(DeviceMessageStore devices, Duration recheckAfterReconnect) {
        this.devices = devices;
        this.recheckAfterReconnect = recheckAfterReconnect;
    }

    /**
     * A reconnect: PUBREL for released messages, then every stored message in order. Returns false
     * if another connection took the session over while {@code target} was connecting.
     */
    boolean restore(Session session, DeliverySink target) {
        if (!session.beginLoading(target)) {
            return false;
        }
        devices.load(session.clientId()).whenComplete((loaded, error) -> target.execute(() -> {
            if (error != null) {
                NOT_LOADED.info("stored messages of %s not loaded (%s); catching up from Redis once it answers",
                        LogText.of(session.clientId()), error.getMessage());
                session.abandonLoading(target);
                if (session.resume(target)) {
                    // Retried every second while the client stays (catchUp): its backlog is not left behind.
                    session.recheckStore(target);
                }
                return;
            }
            LoadedMessages stored = loaded(session, loaded);
            // A connection that closed or was replaced while the store loaded gets nothing: its
            // successor loads for itself.
            if (session.restore(target, stored.released(), stored.messages(), stored.lastScore()) && session.resume(target)) {
                if (stored.highestScore() > 0) {
                    devices.delivered(session.clientId(), stored.highestScore());
                }
                session.fillGapAfterRestore();
                if (!recheckAfterReconnect.isZero()) {
                    after(recheckAfterReconnect.toMillis(), TimeUnit.MILLISECONDS).execute(() -> session.recheckStore(target));
                }
            }
        }));
        return true;
    }

    /** While connected: what the store holds above the session's last score is queued (a gap, a recheck). */
    void catchUp(Session session) {
        devices.load(session.clientId()).whenComplete((loaded, error) -> {
            if (error == null) {
                // Released ones are in flight already (their PUBREC came on this connection).
                int found = session.catchUp(loaded(session, loaded).messages(), loaded.lastScore());
                if (found > 0) {
                    CATCH_UP.info("%d stored messages of %s found in Redis above what it was sent; sending them", found,
                            LogText.of(session.clientId()));
                }
            } else if (session.catchingUp() && session.isConnected()) {
                CATCH_UP.info("catching up %s from Redis failed, retrying: %s", LogText.of(session.clientId()), error.getMessage());
                after(1, TimeUnit.SECONDS).execute(() -> {
                    if (session.catchingUp()) {
                        catchUp(session);
                    }
                });
            } else {
                session.abandonCatchUp();
            }
        });
    }

    /**
     * Runs a task after {@code delay} on the JDK's one delay thread. The tasks here only take a
     * session's lock for a moment and start asynchronous Redis calls; the default async pool would
     * start a thread per task on a 2-core machine (a reconnect storm, thousands of them).
     */
    static Executor after(long delay, TimeUnit unit) {
        return CompletableFuture.delayedExecutor(delay, unit, Runnable::run);
    }

    private static LoadedMessages loaded(Session session, DeviceMessageStore.Loaded loaded) {
        return LoadedMessages.of(session.clientId(), loaded, session.dupThreshold(loaded.deliveredScore()));
    }
}
