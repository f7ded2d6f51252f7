package io.tbmq.broker.retain;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.record.PublishMessage;

/**
 * Tells the other nodes about a retained message (or a cleared topic) this node accepted; the
 * future completes when that is durable, so the publisher's acknowledgement waits for it.
 */
public interface RetainedReplication {

    CompletableFuture<Void> replicate(PublishMessage message);

    /** One node: nobody to tell. */
    RetainedReplication NONE = message -> CompletableFuture.completedFuture(null);
}
