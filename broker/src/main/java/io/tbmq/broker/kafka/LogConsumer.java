package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.jboss.logging.Logger;

import io.tbmq.broker.message.PublishMessage;
import io.tbmq.broker.message.PublishMessageCodec;
import io.tbmq.broker.util.RateLimitedLog;

/**
 * One consumer thread of a broker topic: polls, decodes each record into a {@link PublishMessage}
 * and hands it on. A record that cannot be decoded is logged and skipped, never retried forever.
 */
public final class LogConsumer implements Runnable {
    private static final Logger LOG = Logger.getLogger(LogConsumer.class);
    private static final RateLimitedLog BAD_RECORDS = new RateLimitedLog(LOG, 5);

    private final Properties properties;
    private final String topic;
    private final Consumer<PublishMessage> handler;
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], byte[]> consumer;

    public LogConsumer(Properties properties, String topic, Consumer<PublishMessage> handler) {
        this.properties = properties;
        this.topic = topic;
        this.handler = handler;
    }

    @Override
    public void run() {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(properties)) {
            consumer = c;
            c.subscribe(List.of(topic));
            while (running) {
                ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    dispatch(record);
                }
            }
        } catch (WakeupException e) {
            if (running) {
                throw e;
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "consumer of %s stopped", topic);
            throw e;
        }
    }

    private void dispatch(ConsumerRecord<byte[], byte[]> record) {
        PublishMessage message;
        try {
            message = PublishMessageCodec.decode(record.value());
        } catch (IllegalArgumentException e) {
            BAD_RECORDS.info("skipping undecodable record %s-%d@%d: %s", record.topic(), record.partition(), record.offset(),
                    e.getMessage());
            return;
        }
        try {
            handler.accept(message);
        } catch (RuntimeException e) {
            LOG.errorf(e, "routing failed for a message on %s", message.topic());
        }
    }

    public void stop() {
        running = false;
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }
}
