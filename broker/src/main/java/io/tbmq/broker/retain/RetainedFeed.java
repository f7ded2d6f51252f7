package io.tbmq.broker.retain;

import java.nio.charset.StandardCharsets;

import org.jboss.logging.Logger;

import io.tbmq.broker.log.TailHandler;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * Applies tbmq.retained.msg (key = MQTT topic, value = the message, empty = cleared) to this
 * node's retained store: at start the whole topic, then what any node publishes. Every node thus
 * converges to the topic's last record per MQTT topic.
 */
public final class RetainedFeed implements TailHandler {
    private static final Logger LOG = Logger.getLogger(RetainedFeed.class);
    private static final RateLimitedLog BAD = new RateLimitedLog(LOG, 1);

    private final RetainedStore store;
    private int restored;
    private boolean started;

    public RetainedFeed(RetainedStore store) {
        this.store = store;
    }

    @Override
    public void record(byte[] key, byte[] value) {
        if (value == null) {
            store.clear(new String(key, StandardCharsets.UTF_8));
            return;
        }
        try {
            PublishMessage message = PublishMessageCodec.decode(value);
            store.put(message);
            if (!started) {
                restored++;
            }
        } catch (IllegalArgumentException e) {
            BAD.info("unreadable retained message for %s skipped", new String(key, StandardCharsets.UTF_8));
        }
    }

    @Override
    public void caughtUp() {
        started = true;
        LOG.infof("retained messages read back: %d records, %d topics", restored, store.size());
    }
}
