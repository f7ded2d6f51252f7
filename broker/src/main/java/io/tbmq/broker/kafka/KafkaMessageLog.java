package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

import io.tbmq.broker.message.PublishMessage;
import io.tbmq.broker.message.PublishMessageCodec;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.routing.MessageLog;

/** {@link MessageLog} on Kafka: one shared producer appending to {@code tbmq.msg.all}, key = MQTT topic. */
public final class KafkaMessageLog implements MessageLog {
    private final Producer<byte[], byte[]> producer;
    private final String topic;
    private final BrokerMetrics metrics;

    public KafkaMessageLog(KafkaClients clients, KafkaTopics topics, BrokerMetrics metrics) {
        this.producer = new KafkaProducer<>(clients.producer());
        this.topic = topics.msgAll();
        this.metrics = metrics;
    }

    @Override
    public CompletableFuture<Void> append(PublishMessage message) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long start = System.nanoTime();
        try {
            producer.send(new ProducerRecord<>(topic, message.topic().getBytes(StandardCharsets.UTF_8),
                    PublishMessageCodec.encode(message)), (metadata, error) -> {
                        if (error != null) {
                            done.completeExceptionally(error);
                        } else {
                            metrics.produced(System.nanoTime() - start);
                            done.complete(null);
                        }
                    });
        } catch (RuntimeException e) {
            // send() itself throws when metadata cannot be fetched within max.block.ms.
            done.completeExceptionally(e);
        }
        return done;
    }

    /** Sends what is buffered; used on shutdown before the last PUBACKs go out. */
    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }
}
