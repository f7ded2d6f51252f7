package io.tbmq.broker.cluster;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.TailHandler;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.session.SessionRegistry;
import io.tbmq.broker.util.LogText;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Applies tbmq.client.session to this node. At start, the whole topic: this node's own sessions
 * come back (a restart), clients that were connected to it when it stopped lose their connection
 * now (their Wills go out), and the other nodes' sessions fill the directory. Afterwards, each
 * record another node writes: a newer record of a client held here means the client reconnected
 * there (this node lets the session go), a stale one is answered by re-writing ours so the
 * compacted topic ends with the truth.
 */
public final class SessionFeed implements TailHandler {
    private static final Logger LOG = Logger.getLogger(SessionFeed.class);
    private static final RateLimitedLog BAD = new RateLimitedLog(LOG, 1);

    /** What to do with a client whose connection died with its node. */
    public interface LostConnections {
        void lost(SessionState state);
    }

    private final String node;
    private final SessionRegistry sessions;
    private final ClusterDirectory directory;
    private final LostConnections lost;
    private Map<String, byte[]> atStart = new LinkedHashMap<>();

    public SessionFeed(String node, SessionRegistry sessions, ClusterDirectory directory, LostConnections lost) {
        this.node = node;
        this.sessions = sessions;
        this.directory = directory;
        this.lost = lost;
    }

    @Override
    public void record(byte[] key, byte[] value) {
        String clientId = new String(key, StandardCharsets.UTF_8);
        if (atStart != null) {
            if (value == null) {
                atStart.remove(clientId);
            } else {
                atStart.put(clientId, value);
            }
            return;
        }
        if (value == null) {
            directory.remove(clientId);
            return;
        }
        SessionState state = decode(clientId, value);
        if (state == null) {
            return;
        }
        if (state.node().equals(node)) {
            correctOwn(state);
            return;
        }
        Session local = sessions.get(clientId);
        if (local != null && local.hasConnection() && !state.connected()) {
            // Another node adopted a client that is connected here (or connecting: its stored
            // messages loading): it took this node for dead (slow heartbeats), or adopted the
            // client's previous node's record before reading our connect. The connection stays;
            // our record, made newer, wins.
            LOG.infof("%s adopted %s, which is connected here; re-announcing", state.node(), LogText.of(clientId));
            local.version(Math.max(local.version(), state.version()) + 1);
            sessions.journal().saved(local, 0);
            return;
        }
        if (local != null && !sessions.movedAway(state, node, () -> directory.apply(state))) {
            // A late write of a node that lost this client: ours is the truth; write it again.
            BAD.info("stale session record of %s from %s (version %d <= %d); re-announcing", clientId, state.node(),
                    state.version(), local.version());
            sessions.journal().saved(local, local.hasConnection() ? 0 : System.currentTimeMillis());
            return;
        }
        if (local == null) {
            directory.apply(state);
        }
    }

    /**
     * A record this node wrote says offline a client that has a connection here, and nothing newer
     * of it was written here since: the others would store its messages without sending them. A
     * safety net behind the rule that a connected client is never announced offline.
     */
    private void correctOwn(SessionState state) {
        Session local = sessions.get(state.clientId());
        if (local != null && !state.connected() && local.hasConnection() && state.version() >= local.version()) {
            BAD.info("this node announced %s offline while it is connected here; re-announcing", LogText.of(state.clientId()));
            local.version(state.version() + 1);
            sessions.journal().saved(local, 0);
        }
    }

    @Override
    public void caughtUp() {
        long now = System.currentTimeMillis();
        int own = 0;
        int others = 0;
        SessionJournal journal = sessions.journal();
        for (Map.Entry<String, byte[]> e : atStart.entrySet()) {
            SessionState state = decode(e.getKey(), e.getValue());
            if (state == null) {
                continue;
            }
            if (!state.node().equals(node)) {
                directory.apply(state);
                others++;
                continue;
            }
            own++;
            if (state.connected() && state.will() != null) {
                lost.lost(state);
            }
            if (state.persistent()) {
                sessions.restore(state, now);
            } else {
                // Its connection died with this node, and nothing of it outlives a connection.
                journal.ended(state.clientId());
            }
        }
        atStart = null;
        LOG.infof("session directory read: %d sessions of this node, %d held by other nodes", own, others);
    }

    private SessionState decode(String clientId, byte[] value) {
        try {
            return SessionState.decode(clientId, value, node);
        } catch (IllegalArgumentException e) {
            BAD.info("unreadable session record of %s skipped: %s", clientId, e.getMessage());
            return null;
        }
    }
}
