package io.tbmq.broker.session;

import io.tbmq.broker.record.SessionState;

/**
 * Sessions other broker nodes hold, as this node last read them from tbmq.client.session. A node
 * consults it to route to clients connected elsewhere and to take over a session whose client
 * reconnects here.
 */
public interface RemoteSessions {

    /** The session another node holds for this client, or null. */
    SessionState find(String clientId);

    /**
     * This node now holds the client's session: forget the remote record and, from the trie, the
     * subscriptions {@code holder} (the session held here now, or null) does not have too.
     */
    void claim(String clientId, Session holder);

    default boolean isConnected(String clientId) {
        SessionState s = find(clientId);
        return s != null && s.connected();
    }

    /** A single node: nobody else holds sessions. */
    RemoteSessions NONE = new RemoteSessions() {
        @Override
        public SessionState find(String clientId) {
            return null;
        }

        @Override
        public void claim(String clientId, Session holder) {
        }
    };
}
