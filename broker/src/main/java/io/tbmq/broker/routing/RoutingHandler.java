package io.tbmq.broker.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Outcome;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.session.Handoffs;

/**
 * The routing consumer's batch of {@code tbmq.msg.all}: every message matched against the
 * subscriptions, then the batch's DEVICE copies stored in one go; done when every persistent copy
 * is stored or in Kafka, so the offsets are committed only then. Sent when every copy but the
 * DEVICE ones is out: a batch that waits for Redis alone is not read again (that would send the
 * rest twice). Cancelled when the consumer gives the batch up to read it again.
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
    public Outcome handle(List<LogRecord> records, Replays replays) {
        // The sessions' drains go to the event loops once per batch.
        return Handoffs.batch(() -> route(records, replays));
    }

    private Outcome route(List<LogRecord> records, Replays replays) {
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
        // Every copy but the DEVICE ones is out once these are: the store retries those on its own.
        CompletableFuture<Void> sent = allOf(pending);
        pending.add(copies.store());
        CompletableFuture<Void> all = allOf(pending);
        if (pending.size() > 1) {
            // The consumer cancels a batch it gives up: its DEVICE writes stop retrying.
            all.whenComplete((v, error) -> {
                if (all.isCancelled()) {
                    pending.forEach(f -> f.cancel(false));
                }
            });
        }
        return new Outcome(sent, all);
    }

    private static CompletableFuture<Void> allOf(List<CompletableFuture<Void>> futures) {
        return switch (futures.size()) {
            case 0 -> CompletableFuture.completedFuture(null);
            case 1 -> futures.get(0);
            default -> CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new));
        };
    }
}
