package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.routing.MessageLog;

/** {@link MessageLog} on Kafka: appends to {@code tbmq.msg.all}, key = MQTT topic (per-topic order). */
public final class KafkaMessageLog implements MessageLog {
    private final KafkaSender sender;
    private final String topic;
    private final BrokerMetrics metrics;

    public KafkaMessageLog(KafkaSender sender, KafkaTopics topics, BrokerMetrics metrics) {
        this.sender = sender;
        this.topic = topics.msgAll();
        this.metrics = metrics;
    }

    @Override
    public CompletableFuture<Void> append(PublishMessage message) {
        long start = System.nanoTime();
        return sender.send(topic, message.topic().getBytes(StandardCharsets.UTF_8), PublishMessageCodec.encode(message))
                .thenRun(() -> metrics.produced(System.nanoTime() - start));
    }

    @Override
    public void close() {
        // the sender is shared and closed by its owner
    }
}
