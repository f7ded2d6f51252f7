package io.tbmq.broker.log;

import java.util.List;

/**
 * Processes one polled batch of a broker topic, in log order per partition. The consumer commits
 * the batch's offsets only once its outcome is done, and hands the batch over again if it fails,
 * so a handler must tolerate seeing a record twice.
 */
public interface BatchHandler {
    Outcome handle(List<LogRecord> records, Replays replays);
}
