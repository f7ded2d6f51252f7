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
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tbmq.broker.cluster.NodeLiveness;
import io.tbmq.broker.it.ItStack;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.NodeHeartbeat;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;

/**
 * A node that starts while the others move topics to partitions tbmq.msg.all gained joins their
 * move, on a real Kafka: the moving node's heartbeat in tbmq.cluster.nodes says so at once, the
 * starting node reads it before it would accept clients, and a client that published to the
 * moving node and then to the starting one has its messages routed in order. The test plays the
 * routing group, committing its offsets itself.
 */
class PartitionMoveJoinIT {
    private final KafkaTopics topics = new KafkaTopics("it-join-" + System.nanoTime() + ".");
    private final List<AutoCloseable> closing = new ArrayList<>();
    private String bootstrap;
    private Admin admin;

    @BeforeEach
    void start() throws Exception {
        bootstrap = ItStack.get().stack().kafka().bootstrapServers();
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(a);
        admin.createTopics(List.of(new NewTopic(topics.msgAll(), 2, (short) 1), new NewTopic(topics.clusterNodes(), 1, (short) 1)
                .configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
        admin.close();
    }

    /** One node's message log and heartbeats, as BrokerApplication wires them. */
    private final class Node {
        final String id;
        final KafkaSender sender;
        final NodeLiveness liveness;
        final KafkaMessageLog log;
        private volatile boolean reading = true;

        Node(String id) {
            this.id = id;
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            sender = new KafkaSender(new KafkaProducer<byte[], byte[]>(p));
            liveness = new NodeLiveness(id, Duration.ofSeconds(30));
            log = new KafkaMessageLog(sender, topics, new BrokerMetrics(new SimpleMeterRegistry()), admin, Duration.ofSeconds(60),
                    liveness::movesUnderWay, this::heartbeat);
            Thread.ofPlatform().daemon().name(id + "-nodes").start(this::readHeartbeats);
            closing.add(() -> {
                reading = false;
                log.close();
                sender.close();
            });
        }

        void heartbeat() {
            sender.send(topics.clusterNodes(), id.getBytes(StandardCharsets.UTF_8), log.heartbeat(System.currentTimeMillis()).encode());
        }

        /** What CompactedTail does for tbmq.cluster.nodes. */
        private void readHeartbeats() {
            Properties c = new Properties();
            c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
                TopicPartition tp = new TopicPartition(topics.clusterNodes(), 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                while (reading) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        liveness.record(r.key(), r.value());
                    }
                }
            }
        }

        CompletableFuture<Void> publish(String topic, String payload) {
            return log.append(new PublishMessage(topic, 1, false, payload.getBytes(StandardCharsets.UTF_8), MessageProperties.NONE, id,
                    0, 0));
        }
    }

    @Test
    void aNodeStartedDuringAMoveHoldsAClientsNextMessageUntilItsPreviousOneIsRouted() throws Exception {
        Node a = new Node("node-a");
        a.log.start();
        a.heartbeat();
        String moving = null;
        for (int i = 0; moving == null; i++) {
            String t = "plant/line-" + i;
            byte[] key = t.getBytes(StandardCharsets.UTF_8);
            if (BuiltInPartitioner.partitionForKey(key, 2) == 0 && BuiltInPartitioner.partitionForKey(key, 4) != 0) {
                moving = t;
            }
        }
        int to = BuiltInPartitioner.partitionForKey(moving.getBytes(StandardCharsets.UTF_8), 4);
        a.publish(moving, "1").get(30, TimeUnit.SECONDS);

        admin.createPartitions(Map.of(topics.msgAll(), NewPartitions.increaseTo(4))).all().get(30, TimeUnit.SECONDS);
        Awaitility.await("node-a moving").atMost(Duration.ofSeconds(30)).until(() -> a.log.heartbeat(0).moving());

        // node-c starts now: the first count it learns is 4.
        Node c = new Node("node-c");
        c.log.start();
        assertThat(c.log.heartbeat(0).moving()).as("nothing of its own to move").isFalse();
        // The broker reads tbmq.cluster.nodes up to its end before this (CompactedTail.awaitCaughtUp).
        Awaitility.await("node-c read node-a's heartbeat").atMost(Duration.ofSeconds(30))
                .until(() -> c.liveness.movesUnderWay().containsKey("node-a"));
        c.log.joinMoveUnderWay(true);
        assertThat(c.log.heartbeat(0)).as("joined node-a's move before accepting clients").isEqualTo(new NodeHeartbeat(0, 2, 4));
        Awaitility.await("node-c's heartbeat says so at once").atMost(Duration.ofSeconds(10))
                .until(() -> a.liveness.movesUnderWay().containsKey("node-c"));

        // The client reconnects from node-a to node-c: its next message waits for "1", not yet routed.
        CompletableFuture<Void> second = c.publish(moving, "2");
        Thread.sleep(1_500);
        assertThat(second).as("held on node-c while partition 0 is not routed past 1").isNotDone();

        admin.alterConsumerGroupOffsets(topics.msgAllGroup(), Map.of(new TopicPartition(topics.msgAll(), 0), new OffsetAndMetadata(1)))
                .all().get(30, TimeUnit.SECONDS);
        second.get(30, TimeUnit.SECONDS);
        Awaitility.await("both moves ended").atMost(Duration.ofSeconds(30))
                .until(() -> !a.log.heartbeat(0).moving() && !c.log.heartbeat(0).moving());
        assertThat(read(0)).containsExactly("1");
        assertThat(read(to)).as("the moved topic's next message on its new partition").containsExactly("2");
    }

    @Test
    void aNodeStartedAfterTheMoveEndedDoesNotWait() throws Exception {
        Node a = new Node("node-a");
        a.log.start();
        a.heartbeat();
        admin.createPartitions(Map.of(topics.msgAll(), NewPartitions.increaseTo(4))).all().get(30, TimeUnit.SECONDS);
        Awaitility.await("node-a moved").atMost(Duration.ofSeconds(30)).until(() -> a.log.heartbeat(0).moving());
        // Nothing was written to the old partitions: the move ends about a second later.
        Awaitility.await("node-a's move ended").atMost(Duration.ofSeconds(30)).until(() -> !a.log.heartbeat(0).moving());
        // Its heartbeat says so at once: no further heartbeat here.

        Node c = new Node("node-c");
        c.log.start();
        Awaitility.await("node-c heard node-a").atMost(Duration.ofSeconds(10)).until(() -> c.liveness.aliveNodes().contains("node-a"));
        c.log.joinMoveUnderWay(true);
        assertThat(c.liveness.movesUnderWay()).as("node-a's last heartbeat").isEmpty();
        assertThat(c.log.heartbeat(0).moving()).isFalse();
        c.publish("plant/line-1", "x").get(10, TimeUnit.SECONDS);
    }

    private List<String> read(int partition) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
            TopicPartition tp = new TopicPartition(topics.msgAll(), partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(new String(PublishMessageCodec.decode(r.value()).payload(), StandardCharsets.UTF_8));
                }
            }
        }
        return values;
    }
}
