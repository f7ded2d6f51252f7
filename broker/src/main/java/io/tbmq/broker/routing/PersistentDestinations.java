package io.tbmq.broker.routing;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.session.OutboundMessage;
import io.tbmq.broker.session.Session;

/**
 * Where the router sends copies for persistent sessions instead of handing them to memory: a
 * DEVICE session's copy goes to tbmq.msg.persisted (then Redis), an APPLICATION session's to the
 * client's own topic. Each future completes when Kafka has the copy; the router's source offsets
 * are committed only then.
 */
public interface PersistentDestinations {

    CompletableFuture<Void> device(Session session, OutboundMessage message, int sourcePartition, long sourceOffset);

    CompletableFuture<Void> application(Session session, OutboundMessage message);

    /** No persistent stores: every session is kept in memory (the unit-test tier). */
    PersistentDestinations NONE = new PersistentDestinations() {
        @Override
        public CompletableFuture<Void> device(Session session, OutboundMessage message, int sourcePartition, long sourceOffset) {
            session.offer(message);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> application(Session session, OutboundMessage message) {
            session.offer(message);
            return CompletableFuture.completedFuture(null);
        }
    };
}
