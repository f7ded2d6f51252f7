package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.jboss.logging.Logger;

import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.record.NodeHeartbeat;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.record.PublishMessageCodec;
import io.tbmq.broker.routing.MessageLog;

/**
 * {@link MessageLog} on Kafka: appends to {@code tbmq.msg.all}, key = MQTT topic (per-topic order),
 * the partition chosen by {@link MsgAllPartitioner} so that order survives added partitions.
 */
public final class KafkaMessageLog implements MessageLog {
    private static final Logger LOG = Logger.getLogger(KafkaMessageLog.class);
    /**
     * Messages of moving topics held past this go on without waiting: a bound on the memory a growth
     * takes, half the producer's default buffer (their release, like any send, waits while the buffer is full).
     */
    static final long MAX_HELD_BYTES = 16L << 20;
    /** How often each node asks Kafka for the partition count. */
    private static final Duration REFRESH = Duration.ofSeconds(1);
    /**
     * How long after moving a node reads where the old partitions end: every node asks for the count
     * each {@link #REFRESH}, so by then the others have moved too, and what they wrote to a moving
     * topic's old partition before is acknowledged unless Kafka takes about a second for it.
     */
    static final Duration ALIGN = REFRESH.multipliedBy(2);
    private static final long ADVANCE_MILLIS = 100;
    private static final int TIMEOUT_MS = 5_000;
    private static final long WARN_EVERY_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

    private final String topic;
    private final BrokerMetrics metrics;
    private final MsgAllPartitioner partitioner;
    private final Supplier<Map<String, NodeHeartbeat>> movesHeard;
    private volatile boolean running = true;
    /** When this node first learnt the count (System.nanoTime), once it has ({@link #countLearnt}). */
    private volatile long countLearntAt;
    private volatile boolean countLearnt;

    /**
     * @param movesHeard the moves other nodes report in their heartbeats, by node: a node that
     *        starts during one joins it
     * @param announce called when this node begins or ends a move, so that its heartbeat says so at once
     */
    public KafkaMessageLog(KafkaSender sender, KafkaTopics topics, BrokerMetrics metrics, Admin admin, Duration moveWait,
            Supplier<Map<String, NodeHeartbeat>> movesHeard, Runnable announce) {
        this.movesHeard = movesHeard;
        this.topic = topics.msgAll();
        this.metrics = metrics;
        if (moveWait.compareTo(ALIGN.plusSeconds(1)) < 0) {
            LOG.warnf("tbmq.kafka.partition-move-wait is %d ms, less than %d ms (%d ms for every node to move, a second to route): "
                    + "when tbmq.msg.all gains partitions, moving topics may be delivered out of order once", moveWait.toMillis(),
                    ALIGN.plusSeconds(1).toMillis(), ALIGN.toMillis());
        }
        this.partitioner = new MsgAllPartitioner(new OnKafka(sender, admin, topic, topics.msgAllGroup()), moveWait, ALIGN,
                MAX_HELD_BYTES, new MsgAllPartitioner.Outcomes() {
                    @Override
                    public void began(int from, int to) {
                        announce.run();
                    }

                    @Override
                    public void moved(int from, int to, boolean inOrder) {
                        metrics.partitionMoved(inOrder);
                        announce.run();
                    }
                });
        metrics.gauge("tbmq.partition.move.held", "messages of topics moving to a new tbmq.msg.all partition, waiting for the old one",
                partitioner::held);
    }

    /** {@link MsgAllPartitioner.Log} on the node's producer, and the routing group's committed offsets read through the admin client. */
    static final class OnKafka implements MsgAllPartitioner.Log {
        private final KafkaSender sender;
        private final Admin admin;
        private final String topic;
        private final String group;
        private Uuid lastTopicId;
        private int lastCount;

        OnKafka(KafkaSender sender, Admin admin, String topic, String group) {
            this.sender = sender;
            this.admin = admin;
            this.topic = topic;
            this.group = group;
        }

        /** Called by one thread at a time (the one following the count). */
        @Override
        public int partitionCount() {
            TopicDescription description;
            try {
                description = admin.describeTopics(List.of(topic), new DescribeTopicsOptions().timeoutMs(TIMEOUT_MS)).allTopicNames()
                        .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(topic);
            } catch (Exception e) {
                throw failed("partitions of " + topic, e);
            }
            int count = description.partitions().size();
            if (description.topicId().equals(lastTopicId) && count < lastCount) {
                // Kafka never removes partitions: a broker whose metadata lags answers from before a growth.
                return lastCount;
            }
            lastTopicId = description.topicId();
            lastCount = count;
            return count;
        }

        @Override
        public int producerPartitionCount() {
            return sender.partitionCount(topic);
        }

        @Override
        public boolean send(int partition, byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged) {
            return sender.send(topic, partition, key, value, acknowledged);
        }

        @Override
        public void flush() {
            sender.flush();
        }

        @Override
        public Map<Integer, Long> endOffsets(int partitions) {
            Map<TopicPartition, OffsetSpec> wanted = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                wanted.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            try {
                Map<Integer, Long> ends = new HashMap<>();
                admin.listOffsets(wanted, new ListOffsetsOptions().timeoutMs(TIMEOUT_MS)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                        .forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
                return ends;
            } catch (Exception e) {
                throw failed("end offsets of " + topic, e);
            }
        }

        @Override
        public Map<Integer, Long> routedUpTo() {
            try {
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group,
                        new ListConsumerGroupOffsetsOptions().timeoutMs(TIMEOUT_MS)).partitionsToOffsetAndMetadata()
                        .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                Map<Integer, Long> routed = new HashMap<>();
                committed.forEach((tp, offset) -> {
                    if (offset != null && tp.topic().equals(topic)) {
                        routed.put(tp.partition(), offset.offset());
                    }
                });
                return routed;
            } catch (Exception e) {
                throw failed("committed offsets of " + group, e);
            }
        }

        private static IllegalStateException failed(String what, Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new IllegalStateException(what + ": " + KafkaBackbone.rootMessage(e), e);
        }
    }

    /**
     * Learns the partition count (retrying until Kafka answers, as provisioning does: a growth is
     * only recognised from a known count) and from then on follows it, asking Kafka every second.
     */
    public void start() {
        long warned = System.nanoTime() - WARN_EVERY_NANOS;
        while (running) {
            try {
                partitioner.refresh();
                break;
            } catch (RuntimeException e) {
                warned = warn(warned, "reading the partitions of " + topic + " failed (" + e + "); trying again");
                pause(REFRESH.toMillis());
            }
        }
        if (!running) {
            return;
        }
        countLearntAt = System.nanoTime();
        countLearnt = true;
        Thread mover = new Thread(this::follow, "tbmq-msg-all-partitions");
        mover.setDaemon(true);
        mover.start();
    }

    private void follow() {
        long warned = System.nanoTime() - WARN_EVERY_NANOS;
        try {
            while (running) {
                try {
                    pause(REFRESH.toMillis());
                    partitioner.refresh();
                    joinMoveHeard();
                    while (running && !partitioner.advance()) {
                        pause(ADVANCE_MILLIS);
                    }
                } catch (RuntimeException e) {
                    // Kafka unreachable, say: the count stays as it was until it answers; a growth under way keeps its bounds.
                    warned = warn(warned, "following the partitions of " + topic + " failed (" + e + "); trying again");
                }
            }
        } catch (Error e) {
            LOG.errorf(e, "following the partitions of %s stopped: a topic moving to a new partition no longer waits for its old one", topic);
            throw e;
        } finally {
            // Nothing held may outlive this thread: it alone would have released it.
            partitioner.stop(running ? "the thread following the partitions stopped" : "the node is stopping");
        }
    }

    /**
     * Before this node accepts clients: joins a move of topics to new partitions that other nodes
     * report, if the count this node first learnt is where they move to. Waits until every node
     * has had time to notice the growth and say so in a heartbeat ({@link #ALIGN} after this node
     * learnt the count); the thread following the count keeps listening for such a move after.
     * With no other node alive nobody can be moving, and a restart is not held up (a broker ready
     * 2 s later can miss a readiness probe and take 5 s more to get its clients back).
     *
     * @param othersAlive whether any other broker node is alive
     */
    public void joinMoveUnderWay(boolean othersAlive) {
        if (!countLearnt || !othersAlive) {
            return; // stopping before the count was learnt, or alone
        }
        long wait = countLearntAt + ALIGN.toNanos() - System.nanoTime();
        if (wait > 0) {
            pause(TimeUnit.NANOSECONDS.toMillis(wait) + 1);
        }
        joinMoveHeard();
    }

    private void joinMoveHeard() {
        for (Map.Entry<String, NodeHeartbeat> heard : movesHeard.get().entrySet()) {
            if (partitioner.join(heard.getValue().movingFrom(), heard.getValue().movingTo(), heard.getKey())) {
                return;
            }
        }
    }

    /** What this node's heartbeat says of tbmq.msg.all: the move under way here, if any. */
    public NodeHeartbeat heartbeat(long nowMillis) {
        MsgAllPartitioner.Move move = partitioner.move();
        return move == null ? NodeHeartbeat.idle(nowMillis) : new NodeHeartbeat(nowMillis, move.from(), move.to());
    }

    /** A node stopping: messages held for a growth go to Kafka now, before the producer is flushed. */
    public void release() {
        running = false;
        partitioner.stop("the node is stopping");
    }

    private static long warn(long last, String message) {
        long now = System.nanoTime();
        if (now - last < WARN_EVERY_NANOS) {
            LOG.debug(message);
            return last;
        }
        LOG.warn(message);
        return now;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            // Not a way to stop these loops (running is): kept clear so the next pause still pauses.
        }
    }

    @Override
    public CompletableFuture<Void> append(PublishMessage message) {
        long start = System.nanoTime();
        CompletableFuture<Void> done = new CompletableFuture<>();
        partitioner.send(message.topic().getBytes(StandardCharsets.UTF_8), PublishMessageCodec.encode(message), (partition, offset, error) -> {
            if (error != null) {
                done.completeExceptionally(error);
            } else {
                metrics.produced(System.nanoTime() - start);
                done.complete(null);
            }
        });
        return done;
    }

    @Override
    public void close() {
        // the sender is shared and closed by its owner
        release();
    }
}
