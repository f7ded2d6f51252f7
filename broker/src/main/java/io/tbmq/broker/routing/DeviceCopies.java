package io.tbmq.broker.routing;

import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.record.OutboundMessage;

/**
 * The QoS 1 and 2 copies for persistent DEVICE sessions in one routed batch of the log: stored
 * together once the batch is routed (one script call per client, or per slot group), then handed to
 * their sessions, here or through the holding node's downlink topic.
 */
public interface DeviceCopies {

    /** A copy read at {@code sourcePartition}/{@code sourceOffset} of the log, for the session {@code epoch} of {@code clientId}. */
    void add(String clientId, long epoch, OutboundMessage copy, int sourcePartition, long sourceOffset);

    /** Stores what was added; completes when every copy is stored and handed on, so the log's offsets may be committed. */
    CompletableFuture<Void> store();
}
