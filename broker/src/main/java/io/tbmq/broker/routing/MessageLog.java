package io.tbmq.broker.routing;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.record.PublishMessage;

/**
 * The durable log every PUBLISH passes through: Kafka topic {@code tbmq.msg.all} in production.
 * A message is routed to subscribers by whoever consumes the log, never directly.
 */
public interface MessageLog extends AutoCloseable {

    /** Appends the message; completes once the log has acknowledged it (the PUBACK may then go out). */
    CompletableFuture<Void> append(PublishMessage message);

    @Override
    void close();
}
