package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.it.ItStack;

/**
 * {@link MsgAllPartitioner} on a real Kafka: when a topic gains partitions, a message of an MQTT
 * topic that moves waits until the routing group's committed offset has passed that topic's
 * messages in its old partition, and then lands in the new partition, though the producer did
 * not know that partition when the growth began.
 */
class MsgAllPartitionerIT {
    private final String topic = "it-msg-all-" + System.nanoTime();
    private final String group = topic + "-routing";
    private String bootstrap;
    private Admin admin;
    private KafkaSender sender;

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
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "1000");
        sender = new KafkaSender(new KafkaProducer<byte[], byte[]>(p));
    }

    /** What lets the partitioner stop sending held messages one max block after another when Kafka cannot say where they go. */
    @Test
    void aSendToAPartitionTheProducerCannotLearnIsRefusedAtOnce() throws Exception {
        sender.partitionCount(topic);
        CompletableFuture<Exception> heard = new CompletableFuture<>();
        boolean handed = sender.send(topic, 7, "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8),
                (partition, offset, error) -> heard.complete(error));
        assertThat(handed).as("handed to the producer").isFalse();
        assertThat(heard).as("the error was heard during the call").isDone();
        assertThat(heard.get()).isInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
        assertThat(sender.send(topic, 1, "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8),
                (partition, offset, error) -> {
                })).as("a partition the topic has").isTrue();
    }

    @AfterEach
    void stop() {
        if (sender != null) {
            sender.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    /** Kafka's answer to a describe can lag its own topic changes by a moment. */
    private static void refreshUntil(MsgAllPartitioner partitioner, java.util.function.BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                partitioner.refresh();
                if (done.getAsBoolean()) {
                    return;
                }
            } catch (IllegalStateException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                return;
            }
            Thread.sleep(100);
        }
    }

    private CompletableFuture<Long> send(MsgAllPartitioner partitioner, String mqttTopic, String value) {
        CompletableFuture<Long> acked = new CompletableFuture<>();
        partitioner.send(mqttTopic.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), (partition, offset, error) -> {
            if (error != null) {
                acked.completeExceptionally(error);
            } else {
                acked.complete(offset);
            }
        });
        return acked;
    }

    @Test
    void aMovingTopicsMessageWaitsForTheRoutingGroupToPassItsOldPartition() throws Exception {
        List<String> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();
        MsgAllPartitioner partitioner = new MsgAllPartitioner(new KafkaMessageLog.OnKafka(sender, admin, topic, group),
                Duration.ofSeconds(60), Duration.ZERO, 1 << 20, (from, to, inOrder) -> outcomes.add(from + " -> " + to + (inOrder ? " in order" : "")));
        refreshUntil(partitioner, () -> true);
        String moving = null;
        for (int i = 0; moving == null; i++) {
            String t = "plant/line-" + i;
            byte[] key = t.getBytes(StandardCharsets.UTF_8);
            if (BuiltInPartitioner.partitionForKey(key, 2) == 0 && BuiltInPartitioner.partitionForKey(key, 4) != 0) {
                moving = t;
            }
        }
        int to = BuiltInPartitioner.partitionForKey(moving.getBytes(StandardCharsets.UTF_8), 4);
        send(partitioner, moving, "1").get(30, TimeUnit.SECONDS);
        send(partitioner, moving, "2").get(30, TimeUnit.SECONDS);

        admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get(30, TimeUnit.SECONDS);
        refreshUntil(partitioner, partitioner::moving);
        assertThat(partitioner.moving()).as("Kafka has 4 partitions").isTrue();
        assertThat(sender.partitionCount(topic)).as("the producer's metadata, refreshed every 5 minutes").isEqualTo(2);
        CompletableFuture<Long> third = send(partitioner, moving, "3");
        assertThat(partitioner.advance()).as("nothing routed yet").isFalse();
        Thread.sleep(500);
        assertThat(third).as("held while messages 1 and 2 are not routed").isNotDone();

        // The routing group commits past message 1 only, then past both.
        admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(1))).all().get(30,
                TimeUnit.SECONDS);
        assertThat(partitioner.advance()).isFalse();
        assertThat(third).isNotDone();
        admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(2))).all().get(30,
                TimeUnit.SECONDS);
        assertThat(partitioner.advance()).isTrue();
        assertThat(sender.partitionCount(topic)).as("sending the held message made the producer learn the partitions").isEqualTo(4);
        assertThat(outcomes).containsExactly("2 -> 4 in order");
        third.get(30, TimeUnit.SECONDS);
        send(partitioner, moving, "4").get(30, TimeUnit.SECONDS);

        assertThat(read(0)).containsExactly("1", "2");
        assertThat(read(to)).as("the moved topic's later messages, in order, on its new partition").containsExactly("3", "4");
    }

    private List<String> read(int partition) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
            TopicPartition tp = new TopicPartition(topic, partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return values;
    }
}
