package io.tbmq.broker.testing;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.routing.MessageLog;

/**
 * The message log of the unit-test tier: every append goes through the Kafka record codec and
 * is routed at once. {@link #fail()} makes appends fail, as a Kafka outage would; {@link #hold()}
 * keeps acknowledgements back until {@link #release()}.
 */
public final class LoopbackMessageLog implements MessageLog {
    private final Consumer<PublishMessage> router;
    private final List<PublishMessage> appended = new CopyOnWriteArrayList<>();
    private final List<Runnable> held = new CopyOnWriteArrayList<>();
    private volatile boolean failing;
    private volatile boolean holding;

    public LoopbackMessageLog(Consumer<PublishMessage> router) {
        this.router = router;
    }

    @Override
    public CompletableFuture<Void> append(PublishMessage message) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (failing) {
            done.completeExceptionally(new IllegalStateException("log unavailable (test)"));
            return done;
        }
        PublishMessage roundTripped = PublishMessageCodec.decode(PublishMessageCodec.encode(message));
        appended.add(roundTripped);
        Runnable complete = () -> {
            router.accept(roundTripped);
            done.complete(null);
        };
        if (holding) {
            held.add(complete);
        } else {
            complete.run();
        }
        return done;
    }

    public List<PublishMessage> appended() {
        return appended;
    }

    public void fail() {
        failing = true;
    }

    public void hold() {
        holding = true;
    }

    /** Acknowledges held appends, last first when {@code reversed} (as different partitions may). */
    public void release(boolean reversed) {
        holding = false;
        List<Runnable> batch = new java.util.ArrayList<>(held);
        held.clear();
        if (reversed) {
            java.util.Collections.reverse(batch);
        }
        batch.forEach(Runnable::run);
    }

    @Override
    public void close() {
    }
}
