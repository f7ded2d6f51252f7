package io.tbmq.broker.routing;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.message.PublishMessage;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.retain.RetainedStore;

/**
 * Entry of every application message into the broker (client PUBLISHes and Will messages): it is
 * appended to the message log, and once the log acknowledged it a retained message replaces the
 * topic's previous one, so a subscriber arriving after the PUBACK sees it.
 */
public final class Publisher {
    private final MessageLog log;
    private final RetainedStore retained;
    private final BrokerMetrics metrics;

    public Publisher(MessageLog log, RetainedStore retained, BrokerMetrics metrics) {
        this.log = log;
        this.retained = retained;
        this.metrics = metrics;
    }

    public CompletableFuture<Void> publish(PublishMessage message) {
        CompletableFuture<Void> appended = log.append(message);
        if (!message.retain()) {
            return appended;
        }
        return appended.thenRun(() -> {
            if (!retained.put(message)) {
                metrics.retainedRefused();
            }
        });
    }
}
