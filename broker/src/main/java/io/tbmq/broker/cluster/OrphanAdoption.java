package io.tbmq.broker.cluster;

import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionRegistry;

/**
 * What happens to the clients of a node that died (killed, or silent past the node timeout):
 * the caretaker ({@link NodeLiveness#isCaretaker()}) publishes the Wills of those that were
 * connected, adopts their persistent sessions (they expire here, on time, unless the client
 * reconnects anywhere first) and ends the others. A node that left after draining is handled the
 * same way at once. Runs on the heartbeat timer.
 */
public final class OrphanAdoption {
    private static final Logger LOG = Logger.getLogger(OrphanAdoption.class);

    private final String self;
    private final NodeLiveness liveness;
    private final ClusterDirectory directory;
    private final SessionRegistry sessions;
    private final SessionFeed.LostConnections lost;

    public OrphanAdoption(String self, NodeLiveness liveness, ClusterDirectory directory, SessionRegistry sessions,
            SessionFeed.LostConnections lost) {
        this.self = self;
        this.liveness = liveness;
        this.directory = directory;
        this.sessions = sessions;
        this.lost = lost;
    }

    /** Adopts the sessions of every dead node, if this node is the caretaker; returns how many. */
    public int adoptOrphans() {
        if (!liveness.caughtUpOnce() || !liveness.viewIsCurrent() || !liveness.isCaretaker()) {
            return 0;
        }
        List<String> dead = new ArrayList<>();
        for (String node : directory.nodes().keySet()) {
            if (!liveness.alive(node)) {
                dead.add(node);
            }
        }
        int adopted = 0;
        for (String node : dead) {
            List<SessionState> orphans = directory.heldBy(node);
            for (SessionState state : orphans) {
                adopt(state);
            }
            adopted += orphans.size();
            LOG.infof("node %s is gone: %d of its sessions taken over by %s", node, orphans.size(), self);
        }
        return adopted;
    }

    private void adopt(SessionState state) {
        long now = System.currentTimeMillis();
        if (state.connected() && state.will() != null) {
            lost.lost(state);
        }
        // The client may have reconnected here since its node's sessions were listed: then this
        // node holds it already, and must not announce it offline (the others would stop sending it anything).
        if (state.persistent()) {
            Session session = sessions.adoptOrphan(state.adoptedBy(self, now), now);
            if (session != null) {
                directory.claim(state.clientId(), session);
            }
        } else if (sessions.endOrphan(state.clientId())) {
            directory.claim(state.clientId(), null);
        }
    }
}
