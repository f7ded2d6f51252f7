package io.tbmq.broker.session;

/**
 * Records persistent sessions so a restarted broker finds them again: state saved on connect,
 * subscription changes and disconnect; removed when the session ends.
 */
public interface SessionJournal {

    void saved(Session session, long disconnectedAtMillis);

    void ended(String clientId);

    /** Nothing is recorded: sessions live and die with the process (the unit-test tier). */
    SessionJournal NONE = new SessionJournal() {
        @Override
        public void saved(Session session, long disconnectedAtMillis) {
        }

        @Override
        public void ended(String clientId) {
        }
    };
}
