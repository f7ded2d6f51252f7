package io.tbmq.broker.log;

import java.util.concurrent.CompletableFuture;

/**
 * What a handler returns for a polled batch. {@code done} completes when every record is
 * processed, so the batch's offsets may be committed. {@code sent} completes when every copy went
 * out except those a store keeps trying to write on its own: a batch sent but not done waits only
 * for a store that refuses for now (a full Redis master, or one that is down). Read again, such a
 * batch would send its other copies a second time, so its consumer waits on past the batch
 * timeout instead.
 */
public record Outcome(CompletableFuture<Void> sent, CompletableFuture<Void> done) {

    /** A batch with no store retrying on its own: sent only when done. */
    public static Outcome of(CompletableFuture<Void> done) {
        return new Outcome(done, done);
    }
}
