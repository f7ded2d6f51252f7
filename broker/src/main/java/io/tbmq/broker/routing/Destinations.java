package io.tbmq.broker.routing;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.record.OutboundMessage;

/**
 * Where the router sends copies it does not hand to a session in this node's memory and does not
 * store itself ({@link DeviceCopies}): an APPLICATION session's copy goes to the client's own topic,
 * and a copy for a client connected to another node to that node's downlink topic. Each future
 * completes when Kafka has the copy; the router's source offsets are committed only then. A null
 * future means "keep it in memory here" (no persistent store configured).
 */
public interface Destinations {

    CompletableFuture<Void> application(String clientId, OutboundMessage message);

    /** A copy for a session held by {@code node} that is not stored on the way (in-memory sessions, QoS 0). */
    CompletableFuture<Void> downlink(String node, String clientId, long epoch, OutboundMessage message);

    /** No Kafka: every session is kept in memory, nothing leaves the node (the unit-test tier). */
    Destinations NONE = new Destinations() {
        @Override
        public CompletableFuture<Void> application(String clientId, OutboundMessage message) {
            return null;
        }

        @Override
        public CompletableFuture<Void> downlink(String node, String clientId, long epoch, OutboundMessage message) {
            return CompletableFuture.completedFuture(null);
        }
    };
}
