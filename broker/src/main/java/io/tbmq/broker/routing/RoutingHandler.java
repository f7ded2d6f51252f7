package io.tbmq.broker.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.session.Handoffs;

/**
 * The routing consumer's batch of {@code tbmq.msg.all}: every message matched against the
 * subscriptions, then the batch's DEVICE copies stored in one go; done when every persistent copy
 * is stored or in Kafka, so the offsets are committed only then. Cancelled when the consumer gives
 * the batch up to read it again.
 */
public final class RoutingHandler implements BatchHandler {
    private static final Logger LOG = Logger.getLogger(RoutingHandler.class);

    private final Router router;
    private final Supplier<DeviceCopies> deviceCopies;

    /** {@code deviceCopies} makes an empty batch of DEVICE copies for each polled batch. */
    public RoutingHandler(Router router, Supplier<DeviceCopies> deviceCopies) {
        this.router = router;
        this.deviceCopies = deviceCopies;
    }

    @Override
    public CompletableFuture<Void> handle(List<LogRecord> records, Replays replays) {
        // The sessions' drains go to the event loops once per batch.
        return Handoffs.batch(() -> route(records, replays));
    }

    private CompletableFuture<Void> route(List<LogRecord> records, Replays replays) {
        DeviceCopies copies = deviceCopies.get();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (LogRecord record : records) {
            PublishMessage message;
            try {
                message = PublishMessageCodec.decode(record.value());
            } catch (IllegalArgumentException e) {
                LOG.debugf("skipping undecodable record %s-%d@%d", record.topic(), record.partition(), record.offset());
                continue;
            }
            CompletableFuture<Void> sent = router.route(message, record.partition(), record.offset(),
                    replays.possible(record.partition(), record.offset()), copies);
            if (!sent.isDone()) {
                pending.add(sent);
            }
        }
        pending.add(copies.store());
        if (pending.size() == 1) {
            return pending.get(0);
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
        // The consumer cancels a batch it gives up: its DEVICE writes stop retrying.
        all.whenComplete((v, error) -> {
            if (all.isCancelled()) {
                pending.forEach(f -> f.cancel(false));
            }
        });
        return all;
    }
}
