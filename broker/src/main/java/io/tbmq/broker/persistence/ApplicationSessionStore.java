package io.tbmq.broker.persistence;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.session.DeliverySink;
import io.tbmq.broker.session.Session;
import io.tbmq.broker.session.SessionStore;

/**
 * Persistent APPLICATION sessions in a Kafka topic per client ({@link ApplicationStore}): the topic
 * exists before CONNACK, a connected client is fed from what it acknowledged last, and the topic
 * goes with the session.
 */
public final class ApplicationSessionStore implements SessionStore {
    private final ApplicationStore applications;
    /** A client that was a persistent DEVICE client before keeps its Redis backlog: loaded first. */
    private final SessionStore devices;

    public ApplicationSessionStore(ApplicationStore applications, SessionStore devices) {
        this.applications = applications;
        this.devices = devices;
    }

    @Override
    public CompletableFuture<Void> prepare(Session session) {
        return applications.prepare(session.clientId());
    }

    @Override
    public boolean attach(Session session, DeliverySink target) {
        boolean attached = session.everDevice() ? devices.attach(session, target) : session.resume(target);
        if (attached) {
            applications.attach(session, target);
        }
        return attached;
    }

    @Override
    public void detach(Session session, DeliverySink target) {
        applications.detach(session.clientId(), target);
    }

    @Override
    public void acknowledged(Session session, int packetId, long score) {
        applications.acknowledged(session.clientId(), score);
    }

    /** Kafka keeps the message until it is acknowledged: nothing to record for a PUBREC. */
    @Override
    public void released(Session session, int packetId, long score) {
    }

    /** The client's topic is read in order from its last acknowledgement: there are no gaps to fill. */
    @Override
    public boolean fillsGaps() {
        return false;
    }

    @Override
    public void missed(Session session) {
    }

    @Override
    public void recheck(Session session) {
    }

    @Override
    public CompletableFuture<Void> ended(Session session) {
        return applications.ended(session.clientId());
    }
}
