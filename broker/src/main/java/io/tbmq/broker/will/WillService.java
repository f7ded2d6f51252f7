package io.tbmq.broker.will;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.tbmq.broker.record.Will;
import io.tbmq.broker.routing.Publisher;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.util.Clock;
import io.tbmq.broker.util.LogText;

/**
 * Publishes Will Messages: at once when a connection ends without a normal DISCONNECT, or after
 * the Will Delay Interval, or when the session ends, whichever is first [MQTT-3.1.2-8]; cancelled
 * if the client reconnects within the delay [MQTT-3.1.3-9].
 */
public final class WillService implements SessionRegistry.SessionListener {
    private static final Logger LOG = Logger.getLogger(WillService.class);

    private final Publisher publisher;
    private final ScheduledExecutorService timers;
    private final ConcurrentHashMap<String, Pending> pending = new ConcurrentHashMap<>();

    private record Pending(Will will, ScheduledFuture<?> timer) {
    }

    public WillService(Publisher publisher, ScheduledExecutorService timers) {
        this.publisher = publisher;
        this.timers = timers;
    }

    /** The connection ended abnormally; {@code sessionExpirySeconds} caps the delay. */
    public void connectionLost(Will will, long sessionExpirySeconds) {
        long delay = Math.min(will.delaySeconds(), sessionExpirySeconds);
        if (delay <= 0) {
            publish(will);
            return;
        }
        ScheduledFuture<?> timer = timers.schedule(() -> {
            Pending p = pending.get(will.clientId());
            if (p != null && p.will() == will && pending.remove(will.clientId(), p)) {
                publish(will);
            }
        }, delay, TimeUnit.SECONDS);
        Pending previous = pending.put(will.clientId(), new Pending(will, timer));
        if (previous != null) {
            previous.timer().cancel(false);
        }
    }

    /** The client reconnected to its session: a delayed Will is not sent. */
    public void cancel(String clientId) {
        Pending p = pending.remove(clientId);
        if (p != null) {
            p.timer().cancel(false);
        }
    }

    public void publishNow(Will will) {
        publish(will);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> sessionEnded(Session session) {
        Pending p = pending.remove(session.clientId());
        if (p != null) {
            p.timer().cancel(false);
            publish(p.will());
        }
        return java.util.concurrent.CompletableFuture.completedFuture(null);
    }

    private void publish(Will will) {
        publisher.publish(will.toMessage(System.currentTimeMillis(), Clock.nowMicros())).whenComplete((ok, error) -> {
            if (error != null) {
                LOG.warnf("Will of %s to %s not published: %s", LogText.of(will.clientId()), LogText.of(will.topic()), error.getMessage());
            }
        });
    }
}
