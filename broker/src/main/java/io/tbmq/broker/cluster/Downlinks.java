package io.tbmq.broker.cluster;

import java.util.concurrent.CompletableFuture;
import io.tbmq.broker.record.DownlinkRecord;

/** Sends a copy to the downlink topic of the node holding its client (basic or persisted, by the record). */
public interface Downlinks {

    CompletableFuture<Void> send(String node, String clientId, DownlinkRecord record);

    /** One node, nobody to send to. */
    Downlinks NONE = (node, clientId, record) -> CompletableFuture.completedFuture(null);
}
