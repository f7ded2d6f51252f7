package io.tbmq.broker.log;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Processes one polled batch of a broker topic, in log order per partition. The consumer commits
 * the batch's offsets only once the future completes, and hands the batch over again if it fails,
 * so a handler must tolerate seeing a record twice.
 */
public interface BatchHandler {
    CompletableFuture<Void> handle(List<LogRecord> records, Replays replays);
}
