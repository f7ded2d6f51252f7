package io.tbmq.broker.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;

/**
 * The routing consumer's batch of {@code tbmq.msg.all}: every message matched against the
 * subscriptions; done when every persistent copy is in Kafka, so the offsets are committed only then.
 */
public final class RoutingHandler implements BatchHandler {
    private static final Logger LOG = Logger.getLogger(RoutingHandler.class);

    private final Router router;

    public RoutingHandler(Router router) {
        this.router = router;
    }

    @Override
    public CompletableFuture<Void> handle(List<LogRecord> records, Replays replays) {
        List<CompletableFuture<Void>> pending = null;
        for (LogRecord record : records) {
            PublishMessage message;
            try {
                message = PublishMessageCodec.decode(record.value());
            } catch (IllegalArgumentException e) {
                LOG.debugf("skipping undecodable record %s-%d@%d", record.topic(), record.partition(), record.offset());
                continue;
            }
            CompletableFuture<Void> persisted = router.route(message, record.partition(), record.offset(),
                    replays.possible(record.partition(), record.offset()));
            if (!persisted.isDone()) {
                if (pending == null) {
                    pending = new ArrayList<>();
                }
                pending.add(persisted);
            }
        }
        return pending == null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }
}
