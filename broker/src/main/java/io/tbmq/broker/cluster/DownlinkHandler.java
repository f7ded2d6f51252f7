package io.tbmq.broker.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Outcome;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.record.DownlinkRecord;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.session.Handoffs;
import io.tbmq.broker.session.RemoteSessions;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * This node's downlink topics: copies other nodes matched for clients held here. A copy for the
 * session it names goes to it; if the client moved on meanwhile, the copy follows it to its new
 * node (a few hops at most); a copy for a session that ended is dropped and counted. A DEVICE
 * message whose client went offline is left alone: it is in Redis, and the next connect loads it.
 */
public final class DownlinkHandler implements BatchHandler {
    private static final Logger LOG = Logger.getLogger(DownlinkHandler.class);
    private static final RateLimitedLog BAD = new RateLimitedLog(LOG, 1);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final SessionRegistry sessions;
    private final RemoteSessions remote;
    private final Downlinks downlinks;
    private final BrokerMetrics metrics;

    public DownlinkHandler(SessionRegistry sessions, RemoteSessions remote, Downlinks downlinks, BrokerMetrics metrics) {
        this.sessions = sessions;
        this.remote = remote;
        this.downlinks = downlinks;
        this.metrics = metrics;
    }

    @Override
    public Outcome handle(List<LogRecord> records, Replays replays) {
        // The sessions' drains go to the event loops once per batch.
        return Outcome.of(Handoffs.batch(() -> deliver(records)));
    }

    private CompletableFuture<Void> deliver(List<LogRecord> records) {
        // A replayed downlink copy belonged to a session of this node before it restarted: its epoch is gone.
        List<CompletableFuture<Void>> forwarded = null;
        for (LogRecord r : records) {
            String clientId = new String(r.key(), StandardCharsets.UTF_8);
            if (AdminCommand.is(r.value())) {
                command(clientId, r.value());
                continue;
            }
            DownlinkRecord d;
            try {
                d = DownlinkRecord.decode(r.value());
            } catch (RuntimeException e) {
                BAD.info("skipping undecodable downlink record %s-%d@%d", r.topic(), r.partition(), r.offset());
                continue;
            }
            CompletableFuture<Void> f = deliver(clientId, d);
            if (f != null) {
                if (forwarded == null) {
                    forwarded = new ArrayList<>();
                }
                forwarded.add(f);
            }
        }
        return forwarded == null ? DONE : CompletableFuture.allOf(forwarded.toArray(CompletableFuture[]::new));
    }

    private void command(String clientId, byte[] value) {
        try {
            AdminCommand c = AdminCommand.decode(value);
            boolean done = sessions.disconnectByAdmin(clientId, c.epoch(), c.clear());
            LOG.infof("administrator's %s of %s: %s", c.clear() ? "disconnect and clear" : "disconnect", LogText.of(clientId),
                    done ? "done" : "no such session here any more");
        } catch (RuntimeException e) {
            BAD.info("skipping undecodable admin command for %s: %s", LogText.of(clientId), e.getMessage());
        }
    }

    private CompletableFuture<Void> deliver(String clientId, DownlinkRecord d) {
        Session session = sessions.get(clientId);
        if (session != null && session.epoch() == d.epoch()) {
            if (!d.stored() || session.isConnected()) {
                session.offer(d.outbound());
            }
            return null;
        }
        SessionState there = remote.find(clientId);
        if (there != null && there.epoch() == d.epoch() && d.hops() < DownlinkRecord.MAX_HOPS
                && (there.connected() || !d.stored())) {
            return downlinks.send(there.node(), clientId, d.forwarded());
        }
        metrics.dropped(session == null && there == null ? "session-gone" : "session-moved");
        if (LOG.isDebugEnabled()) {
            LOG.debugf("downlink copy for %s (epoch %d) dropped: here %s, elsewhere %s", LogText.of(clientId), d.epoch(),
                    session == null ? "none" : "epoch " + session.epoch(), there);
        }
        return null;
    }
}
