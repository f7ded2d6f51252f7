package io.tbmq.broker.persistence;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.BatchHandler;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Outcome;
import io.tbmq.broker.log.Replays;
import io.tbmq.broker.record.PersistedRecord;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * tbmq.msg.persisted into Redis, then to the client. The routing consumer stores DEVICE copies in
 * Redis itself; this drains what a broker of an earlier version routed through the topic (during a
 * rolling upgrade), with the same batching, replay protection and commit-after-store.
 */
public final class PersistedHandler implements BatchHandler {
    private static final Logger LOG = Logger.getLogger(PersistedHandler.class);
    private static final RateLimitedLog BAD = new RateLimitedLog(LOG, 2);

    private final DeviceWrites writes;

    public PersistedHandler(DeviceWrites writes) {
        this.writes = writes;
    }

    @Override
    public Outcome handle(List<LogRecord> records, Replays replays) {
        // Replays need no marking here: Redis recognises a source offset it applied already.
        DeviceWrites.Batch batch = writes.batch();
        for (LogRecord record : records) {
            PersistedRecord r;
            try {
                r = PersistedRecord.decode(record.value());
            } catch (IllegalArgumentException e) {
                BAD.info("skipping undecodable record %s-%d@%d", record.topic(), record.partition(), record.offset());
                continue;
            }
            batch.add(new String(record.key(), StandardCharsets.UTF_8), r.epoch(), r.sourcePartition(), record.partition(),
                    r.sourceOffset(), r.expiresAtMillis(), r.stored());
        }
        // Nothing else to send: whatever is not done waits for Redis, and retries on its own.
        return new Outcome(CompletableFuture.completedFuture(null), batch.store());
    }
}
