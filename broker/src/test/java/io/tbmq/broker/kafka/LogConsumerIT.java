package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.it.ItStack;
import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Outcome;

/**
 * Which records a routing consumer treats as possible replays (their copies go out with DUP), on a
 * real Kafka whose group coordinator keeps the commits and their metadata: none in a topic nobody
 * read before (a new cluster's first messages), none after a clean hand-over, and everything up to
 * the end after a first reader that left only its start marker behind (a crash before its first
 * commit).
 */
class LogConsumerIT {
    private final String topic = "it-log-consumer-" + System.nanoTime();
    private final String group = topic + ".routing";
    private final TopicPartition p0 = new TopicPartition(topic, 0);
    private final TopicPartition p1 = new TopicPartition(topic, 1);
    private final List<String> handled = new CopyOnWriteArrayList<>();
    private final List<String> replayed = new CopyOnWriteArrayList<>();
    private String bootstrap;
    private Admin admin;
    private KafkaProducer<byte[], byte[]> producer;

    @BeforeEach
    void start() throws Exception {
        bootstrap = ItStack.get().stack().kafka().bootstrapServers();
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(a);
        admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producer = new KafkaProducer<>(p);
    }

    @AfterEach
    void stop() {
        producer.close();
        admin.close();
    }

    @Test
    void aTopicNobodyReadBeforeHasNoReplaysAndItsFirstReaderLeavesItsStartMarker() throws Exception {
        write(3);
        Reader first = new Reader();
        Awaitility.await().atMost(60, TimeUnit.SECONDS).until(() -> handled.size() == 6);
        assertThat(replayed).as("never delivered before: no copy carries DUP").isEmpty();
        assertThat(committed()).as("committed before any record was processed (no periodic commit yet)")
                .containsEntry(p0, new OffsetAndMetadata(0, LogConsumer.STARTED))
                .containsEntry(p1, new OffsetAndMetadata(0, LogConsumer.STARTED));
        first.stop();
        assertThat(committed()).containsEntry(p0, new OffsetAndMetadata(3, LogConsumer.HANDED_OVER))
                .containsEntry(p1, new OffsetAndMetadata(3, LogConsumer.HANDED_OVER));

        write(2);
        Reader next = new Reader();
        Awaitility.await().atMost(60, TimeUnit.SECONDS).until(() -> handled.size() == 10);
        next.stop();
        assertThat(handled).doesNotHaveDuplicates();
        assertThat(replayed).as("a clean hand-over").isEmpty();
    }

    @Test
    void aFirstReaderThatLeftOnlyItsStartMarkerMayHaveDeliveredEverythingUpToTheEnd() throws Exception {
        write(3);
        // What a first reader that crashed before its first commit leaves behind.
        admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(0, LogConsumer.STARTED),
                p1, new OffsetAndMetadata(0, LogConsumer.STARTED))).all().get(30, TimeUnit.SECONDS);
        Reader successor = new Reader();
        Awaitility.await().atMost(60, TimeUnit.SECONDS).until(() -> handled.size() == 6);
        successor.stop();
        assertThat(replayed).as("possibly delivered before the crash: their copies carry DUP")
                .containsExactlyInAnyOrderElementsOf(handled).hasSize(6);
    }

    /** {@code count} records to each partition. */
    private void write(int count) throws Exception {
        for (int i = 0; i < count; i++) {
            producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte) i})).get(30, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>(topic, 1, null, new byte[] {(byte) i})).get(30, TimeUnit.SECONDS);
        }
    }

    private Map<TopicPartition, OffsetAndMetadata> committed() throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
    }

    /** A member of the group on its own thread; its periodic commits are an hour apart, so only markers are committed. */
    private final class Reader {
        private final LogConsumer consumer;
        private final Thread thread;

        Reader() {
            Properties c = new Properties();
            c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            // As the broker's consumers are (KafkaClients.consumer): cooperative, with static membership.
            c.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
            c.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, group + "-member");
            consumer = new LogConsumer(c, topic, (records, replays) -> {
                for (LogRecord r : records) {
                    handled.add(r.partition() + "@" + r.offset());
                    if (replays.possible(r.partition(), r.offset())) {
                        replayed.add(r.partition() + "@" + r.offset());
                    }
                }
                return Outcome.of(CompletableFuture.completedFuture(null));
            }, Duration.ofSeconds(30), Duration.ofHours(1), 0, LogConsumer.Rest.NEVER);
            thread = new Thread(consumer, "log-consumer-it");
            thread.start();
        }

        void stop() throws InterruptedException {
            consumer.stop();
            thread.join(30_000);
            assertThat(thread.isAlive()).isFalse();
        }
    }
}
