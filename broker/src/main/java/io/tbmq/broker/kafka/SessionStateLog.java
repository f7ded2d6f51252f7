package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;

import org.jboss.logging.Logger;

import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionJournal;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Writes this node's sessions to the compacted topic tbmq.client.session (key = client id, latest
 * state wins, an empty value ends the session): on connect, on every subscription change, on
 * disconnect. Every node reads the topic back ({@link CompactedTail}), which is how the cluster
 * knows where each client is and what it subscribed to.
 */
public final class SessionStateLog implements SessionJournal {
    private static final Logger LOG = Logger.getLogger(SessionStateLog.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);

    private final KafkaSender sender;
    private final String topic;
    private final String node;

    public SessionStateLog(KafkaSender sender, KafkaTopics topics, String node) {
        this.sender = sender;
        this.topic = topics.clientSessions();
        this.node = node;
    }

    @Override
    public void saved(Session session, long disconnectedAtMillis) {
        boolean connected = disconnectedAtMillis == 0;
        if (!connected && session.expiryIntervalSeconds() == 0) {
            ended(session.clientId());
            return;
        }
        write(session.state(node, connected, disconnectedAtMillis));
    }

    /** Writes a record as it is (a session adopted from a dead node). */
    public void write(SessionState state) {
        sender.send(topic, key(state.clientId()), state.encode()).whenComplete((v, e) -> {
            if (e != null) {
                FAILED.info("session state of %s not saved: %s", state.clientId(), e.getMessage());
            }
        });
    }

    @Override
    public void ended(String clientId) {
        sender.send(topic, key(clientId), null);
    }

    private static byte[] key(String clientId) {
        return clientId.getBytes(StandardCharsets.UTF_8);
    }
}
