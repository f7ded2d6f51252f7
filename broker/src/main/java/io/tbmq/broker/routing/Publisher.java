package io.tbmq.broker.routing;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.retain.RetainedReplication;
import io.tbmq.broker.retain.RetainedStore;

/**
 * Entry of every application message into the broker (client PUBLISHes and Will messages): it is
 * appended to the message log, and once the log acknowledged it a retained message replaces the
 * topic's previous one, so a subscriber arriving after the PUBACK sees it (on this node at once, on
 * the others when they read tbmq.retained.msg).
 */
public final class Publisher {
    private final MessageLog log;
    private final RetainedStore retained;
    private final BrokerMetrics metrics;
    private final RetainedReplication replication;

    public Publisher(MessageLog log, RetainedStore retained, BrokerMetrics metrics, RetainedReplication replication) {
        this.log = log;
        this.retained = retained;
        this.metrics = metrics;
        this.replication = replication;
    }

    public CompletableFuture<Void> publish(PublishMessage message) {
        CompletableFuture<Void> appended = log.append(message);
        if (!message.retain()) {
            return appended;
        }
        if (replication == RetainedReplication.NONE) {
            return appended.thenRun(() -> keep(message));
        }
        // Async: the log's future completes on the Kafka producer's own thread, and a send from
        // there waiting for the retained topic's metadata would wait for itself.
        return appended.thenComposeAsync(v -> {
            keep(message);
            return replication.replicate(message);
        });
    }

    private void keep(PublishMessage message) {
        if (!retained.put(message)) {
            metrics.retainedRefused();
        }
    }
}
