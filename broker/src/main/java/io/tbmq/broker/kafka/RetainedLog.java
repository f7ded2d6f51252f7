package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import org.jboss.logging.Logger;

import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.retain.RetainedReplication;
import io.tbmq.broker.util.RateLimitedLog;

/** Retained messages into the compacted topic tbmq.retained.msg (key = MQTT topic; empty payload = tombstone). */
public final class RetainedLog implements RetainedReplication {
    private static final Logger LOG = Logger.getLogger(RetainedLog.class);
    private static final RateLimitedLog FAILED = new RateLimitedLog(LOG, 1);

    private final KafkaSender sender;
    private final String topic;

    public RetainedLog(KafkaSender sender, KafkaTopics topics) {
        this.sender = sender;
        this.topic = topics.retained();
    }

    @Override
    public CompletableFuture<Void> replicate(PublishMessage message) {
        byte[] value = message.payload().length == 0 ? null : PublishMessageCodec.encode(message);
        return sender.send(topic, message.topic().getBytes(StandardCharsets.UTF_8), value).whenComplete((v, e) -> {
            if (e != null) {
                FAILED.info("retained message of %s not replicated: %s", message.topic(), e.getMessage());
            }
        });
    }
}
