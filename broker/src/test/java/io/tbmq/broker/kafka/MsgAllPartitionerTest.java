package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

class MsgAllPartitionerTest {

    /** A log that acknowledges every send at once, numbering each partition's records from 0. */
    static class FakeLog implements MsgAllPartitioner.Log {
        record Sent(int partition, String topic, String value) {
        }

        int count;
        /** Partitions the producer knows; -1: as many as Kafka has. */
        int producerCount = -1;
        /** Messages whose send made the producer fetch its metadata (a partition it did not know). */
        final List<String> fetchedMetadataFor = new ArrayList<>();
        /** Set: the producer cannot fetch metadata, and a send to a partition it does not know fails at once. */
        RuntimeException metadataFails;
        final List<Sent> sent = new ArrayList<>();
        final Map<Integer, Long> next = new HashMap<>();
        Map<Integer, Long> routed = new HashMap<>();
        RuntimeException routedFails;

        @Override
        public int partitionCount() {
            return count;
        }

        @Override
        public int producerPartitionCount() {
            return producerCount < 0 ? count : producerCount;
        }

        @Override
        public boolean send(int partition, byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged) {
            int p = partition < 0 ? BuiltInPartitioner.partitionForKey(key, count) : partition;
            if (p >= producerPartitionCount()) {
                // KafkaProducer.send waits for fresh metadata on the calling thread.
                fetchedMetadataFor.add(new String(value, StandardCharsets.UTF_8));
                if (metadataFails != null) {
                    acknowledged.acknowledged(p, -1, metadataFails);
                    return false;
                }
                producerCount = count;
            }
            sent.add(new Sent(partition, new String(key, StandardCharsets.UTF_8), new String(value, StandardCharsets.UTF_8)));
            long offset = next.merge(p, 1L, Long::sum) - 1;
            acknowledged.acknowledged(p, offset, null);
            return true;
        }

        @Override
        public void flush() {
        }

        @Override
        public Map<Integer, Long> endOffsets(int partitions) {
            return Map.copyOf(next);
        }

        @Override
        public Map<Integer, Long> routedUpTo() {
            if (routedFails != null) {
                throw routedFails;
            }
            return routed;
        }

        List<String> values(String topic) {
            return sent.stream().filter(s -> s.topic().equals(topic)).map(Sent::value).toList();
        }
    }

    final FakeLog log = new FakeLog();
    final AtomicLong now = new AtomicLong();
    final List<String> outcomes = new ArrayList<>();
    final MsgAllPartitioner partitioner = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run,
            (from, to, inOrder) -> outcomes.add(from + " -> " + to + (inOrder ? " in order" : " bounded")));
    final List<String> acknowledged = new ArrayList<>();

    void send(String topic, String value) {
        partitioner.send(topic.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8),
                (p, offset, error) -> acknowledged.add(value));
    }

    static int partition(String topic, int count) {
        return BuiltInPartitioner.partitionForKey(topic.getBytes(StandardCharsets.UTF_8), count);
    }

    /** A topic that keeps (or, with {@code moves}, changes) its partition when 2 partitions become 4. */
    static String topic(boolean moves, int from) {
        for (int i = 0;; i++) {
            String t = "sensors/" + i;
            if (partition(t, 2) == from && (partition(t, 4) != from) == moves) {
                return t;
            }
        }
    }

    @Test
    void placesEachMessageWhereKafkasOwnPartitionerWould() {
        log.count = 2;
        send("a/b", "before the count is known");
        partitioner.refresh();
        for (int i = 0; i < 50; i++) {
            send("sensors/" + i, "m" + i);
        }
        assertThat(log.sent.get(0).partition()).as("Kafka's choice until the count is known").isEqualTo(-1);
        for (int i = 0; i < 50; i++) {
            assertThat(log.sent.get(i + 1).partition()).isEqualTo(partition("sensors/" + i, 2));
        }
        assertThat(partitioner.moving()).isFalse();
    }

    @Test
    void aMovingTopicWaitsUntilItsOldPartitionIsRoutedThenFollowsInOrder() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 0);
        String staying = topic(false, 0);
        send(moving, "1");
        send(moving, "2");
        log.count = 4;
        partitioner.refresh();
        assertThat(partitioner.moving()).isTrue();
        send(moving, "3");
        send(staying, "s");
        send(moving, "4");
        assertThat(log.values(moving)).as("held while partition 0 is not routed past message 2").containsExactly("1", "2");
        assertThat(log.values(staying)).as("a topic that keeps its partition never waits").containsExactly("s");
        assertThat(acknowledged).doesNotContain("3", "4");

        log.routed = Map.of(0, 1L); // message 2 (offset 1) not yet routed
        assertThat(partitioner.advance()).isFalse();
        assertThat(partitioner.held()).isEqualTo(2);

        log.routed = Map.of(0, 3L); // past message 2 and the staying topic's message
        assertThat(partitioner.advance()).as("every old partition routed far enough").isTrue();
        send(moving, "5");
        assertThat(log.values(moving)).containsExactly("1", "2", "3", "4", "5");
        int to = partition(moving, 4);
        assertThat(log.sent.stream().filter(s -> s.topic().equals(moving)).skip(2).map(FakeLog.Sent::partition))
                .as("3, 4 and 5 on the topic's new partition").containsOnly(to);
        assertThat(acknowledged).containsSubsequence("3", "4", "5");
        assertThat(partitioner.moving()).isFalse();
        assertThat(outcomes).containsExactly("2 -> 4 in order");
    }

    @Test
    void aTopicWhoseOldPartitionHadNothingFromThisNodeMovesAtTheFirstLook() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 1);
        log.count = 4;
        partitioner.refresh();
        send(moving, "1");
        assertThat(partitioner.held()).isEqualTo(1);
        assertThat(partitioner.advance()).isTrue();
        assertThat(log.sent).extracting(FakeLog.Sent::partition).containsExactly(partition(moving, 4));
    }

    @Test
    void messagesForPartitionsTheProducerDoesNotKnowYetAreSentByTheThreadFollowingTheCount() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 1);
        String staying = topic(false, 0);
        // Kafka has 4 partitions; the producer's metadata still says 2 until its next refresh.
        log.count = 4;
        log.producerCount = 2;
        partitioner.refresh();
        assertThat(partitioner.advance()).as("nothing of this node's in the old partitions, but the producer knows 2 partitions")
                .isFalse();
        send(moving, "1");
        send(staying, "s");
        send(moving, "2");
        assertThat(log.values(moving)).as("a client's thread never waits for the producer's metadata").isEmpty();
        assertThat(log.values(staying)).containsExactly("s");
        assertThat(partitioner.advance()).as("the first held send made the producer learn the partitions").isTrue();
        assertThat(log.fetchedMetadataFor).containsExactly("1");
        send(moving, "3");
        assertThat(log.values(moving)).containsExactly("1", "2", "3");
        assertThat(log.sent.stream().filter(x -> x.topic().equals(moving)).map(FakeLog.Sent::partition)).containsOnly(
                partition(moving, 4));
        assertThat(outcomes).containsExactly("2 -> 4 in order");
    }

    @Test
    void aNodeWithNothingForTheNewPartitionsEndsTheMoveSoonAfterItsOldPartitionsAreRouted() {
        log.count = 2;
        partitioner.refresh();
        log.count = 4;
        log.producerCount = 2;
        partitioner.refresh();
        assertThat(partitioner.advance()).as("the producer does not know the partitions yet").isFalse();
        now.addAndGet(Duration.ofMillis(1_100).toNanos());
        assertThat(partitioner.advance()).as("a second later, without waiting for the producer").isTrue();
        assertThat(outcomes).containsExactly("2 -> 4 in order");
        send(topic(true, 1), "1");
        assertThat(log.fetchedMetadataFor).as("the first send to a new partition fetches the metadata").containsExactly("1");
    }

    @Test
    void theLongestWaitDoesNotEndAMoveWhoseOldPartitionsAreRouted() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 1);
        log.count = 4;
        log.producerCount = 2;
        partitioner.refresh();
        assertThat(partitioner.advance()).isFalse();
        now.addAndGet(Duration.ofSeconds(11).toNanos());
        send(moving, "1");
        assertThat(partitioner.advance()).isTrue();
        assertThat(outcomes).as("every topic kept its order").containsExactly("2 -> 4 in order");
    }

    /**
     * A client publishes to node A, then to node B, which has not seen the growth yet and writes
     * the topic's old partition, then to node A again. A reads where the old partitions end only
     * once B moved too (the alignment), so the third message waits for the second.
     */
    @Test
    void aClientMovingBetweenNodesDuringTheGrowthKeepsItsOrder() {
        List<Runnable> aSnapshots = new ArrayList<>();
        MsgAllPartitioner a = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, aSnapshots::add);
        MsgAllPartitioner b = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run);
        log.count = 2;
        a.refresh();
        b.refresh();
        String moving = topic(true, 0);
        java.util.function.BiConsumer<MsgAllPartitioner, String> publish = (node, value) -> node.send(
                moving.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), (p, offset, error) -> acknowledged
                        .add(value));
        publish.accept(a, "1");
        log.count = 4;
        a.refresh();
        publish.accept(b, "2");
        assertThat(acknowledged).as("B still writes partition 0").containsExactly("1", "2");
        b.refresh();
        aSnapshots.forEach(Runnable::run); // the alignment has passed
        publish.accept(a, "3");

        log.routed = Map.of(0, 1L); // "1" routed, "2" not yet
        assertThat(a.advance()).isFalse();
        assertThat(log.values(moving)).as("3 waits for 2, which B wrote after A moved").containsExactly("1", "2");
        log.routed = Map.of(0, 2L);
        assertThat(a.advance()).isTrue();
        assertThat(log.values(moving)).containsExactly("1", "2", "3");
    }

    @Test
    void aNodeStartedDuringAMoveJoinsItAndKeepsTheOrderOfAClientComingFromAMovingNode() {
        List<String> began = new ArrayList<>();
        MsgAllPartitioner.Outcomes heard = new MsgAllPartitioner.Outcomes() {
            @Override
            public void began(int from, int to) {
                began.add(from + " -> " + to);
            }

            @Override
            public void moved(int from, int to, boolean inOrder) {
                outcomes.add(from + " -> " + to + (inOrder ? " in order" : " bounded"));
            }
        };
        MsgAllPartitioner a = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run, heard);
        log.count = 2;
        a.refresh();
        String moving = topic(true, 0);
        java.util.function.BiConsumer<MsgAllPartitioner, String> publish = (node, value) -> node.send(
                moving.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), (p, offset, error) -> acknowledged
                        .add(value));
        publish.accept(a, "1");
        log.count = 4;
        a.refresh();
        assertThat(a.move()).as("what A's heartbeat says").isEqualTo(new MsgAllPartitioner.Move(2, 4));
        assertThat(began).containsExactly("2 -> 4");

        // C starts now: the first count it sees is 4, and it has nothing of its own to move.
        MsgAllPartitioner c = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run, heard);
        c.refresh();
        assertThat(c.moving()).isFalse();
        assertThat(c.join(2, 4, "node-a")).as("joins the move A reports").isTrue();
        assertThat(c.move()).isEqualTo(new MsgAllPartitioner.Move(2, 4));
        assertThat(began).containsExactly("2 -> 4", "2 -> 4");
        publish.accept(c, "2"); // the client reconnected from A to C

        assertThat(c.advance()).as("partition 0 not routed past 1").isFalse();
        assertThat(log.values(moving)).as("2 waits on C for 1, which A wrote to the old partition").containsExactly("1");
        log.routed = Map.of(0, 1L);
        assertThat(c.advance()).isTrue();
        assertThat(a.advance()).isTrue();
        assertThat(log.values(moving)).containsExactly("1", "2");
        assertThat(log.sent.get(0).partition()).as("1 on the old partition").isZero();
        assertThat(log.sent.get(1).partition()).as("2 on the topic's new partition").isEqualTo(partition(moving, 4));
        assertThat(outcomes).containsExactly("2 -> 4 in order", "2 -> 4 in order");
        assertThat(c.move()).isNull();
    }

    @Test
    void aNodeJoinsOnlyAMoveToTheCountItFirstSawAndOnlyOnce() {
        MsgAllPartitioner started = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run);
        log.count = 4;
        assertThat(started.join(2, 4, "node-a")).as("before it knows the count").isFalse();
        started.refresh();
        assertThat(started.join(2, 6, "node-a")).as("a move to another count").isFalse();
        assertThat(started.join(4, 4, "node-a")).as("no growth").isFalse();
        assertThat(started.join(2, 4, "node-a")).isTrue();
        assertThat(started.advance()).isTrue(); // nothing was written to partitions 0 and 1
        assertThat(started.join(2, 4, "node-b")).as("a move it joined already, still in another node's heartbeat").isFalse();

        MsgAllPartitioner grown = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run);
        log.count = 2;
        grown.refresh();
        log.count = 4;
        grown.refresh();
        assertThat(grown.advance()).isTrue();
        assertThat(grown.join(2, 4, "node-a")).as("a node that moved by itself").isFalse();

        MsgAllPartitioner stopping = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run);
        stopping.refresh();
        stopping.stop("test");
        assertThat(stopping.join(2, 4, "node-a")).as("a node stopping").isFalse();
    }

    @Test
    void aMoveReportedPastTheLongestWaitAfterTheNodeLearntTheCountIsStale() {
        log.count = 4;
        MsgAllPartitioner late = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run);
        late.refresh();
        now.addAndGet(Duration.ofSeconds(12).toNanos());
        assertThat(late.join(2, 4, "node-a")).as("a move under way then may still be ending").isTrue();
        late.stop("test");

        MsgAllPartitioner stale = new MsgAllPartitioner(log, Duration.ofSeconds(10), 1_000, now::get, Runnable::run);
        stale.refresh();
        now.addAndGet(Duration.ofSeconds(14).toNanos());
        assertThat(stale.join(2, 4, "node-a")).as("every move under way then has ended: a node that died moving, say").isFalse();
        assertThat(stale.moving()).isFalse();
    }

    @Test
    void aNodeReadsWhereTheOldPartitionsEndOnlyAfterTheAlignment() throws Exception {
        java.util.concurrent.CompletableFuture<Long> readAt = new java.util.concurrent.CompletableFuture<>();
        FakeLog timed = new FakeLog() {
            @Override
            public Map<Integer, Long> endOffsets(int partitions) {
                readAt.complete(System.nanoTime());
                return super.endOffsets(partitions);
            }
        };
        MsgAllPartitioner p = new MsgAllPartitioner(timed, Duration.ofSeconds(10), Duration.ofMillis(300), 1_000,
                MsgAllPartitioner.Outcomes.NONE);
        timed.count = 2;
        p.refresh();
        timed.count = 4;
        long moved = System.nanoTime();
        p.refresh();
        assertThat(p.moving()).isTrue();
        assertThat(readAt.get(10, java.util.concurrent.TimeUnit.SECONDS) - moved).as("nanoseconds from moving to reading the ends")
                .isGreaterThanOrEqualTo(Duration.ofMillis(300).toNanos());
    }

    @Test
    void pastTheWaitTheHeldMessagesGoOnInOrder() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 0);
        send(moving, "1");
        log.count = 4;
        partitioner.refresh();
        send(moving, "2");
        send(moving, "3");
        log.routedFails = new IllegalStateException("coordinator not available");
        assertThat(partitioner.advance()).as("no answer: still waiting").isFalse();
        now.addAndGet(Duration.ofSeconds(11).toNanos());
        assertThat(partitioner.advance()).isTrue();
        assertThat(log.values(moving)).containsExactly("1", "2", "3");
        assertThat(acknowledged).containsExactly("1", "2", "3");
        assertThat(outcomes).containsExactly("2 -> 4 bounded");
    }

    @Test
    void pastTheMemoryBoundTheHeldMessagesGoOnAtTheNextLook() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 0);
        send(moving, "first");
        log.count = 4;
        partitioner.refresh();
        String big = "x".repeat(600);
        send(moving, big);
        assertThat(partitioner.advance()).isFalse();
        send(moving, big);
        assertThat(partitioner.held()).isEqualTo(2);
        assertThat(partitioner.advance()).as("1,200 bytes held, past the bound of 1,000").isTrue();
        assertThat(log.values(moving)).containsExactly("first", big, big);
    }

    @Test
    void aSmallerCountIsBelievedWhenKafkaSaysItThreeTimesInARow() {
        log.count = 4;
        partitioner.refresh();
        log.count = 2;
        partitioner.refresh();
        partitioner.refresh();
        send("a/b", "m1");
        partitioner.refresh();
        assertThat(partitioner.moving()).isFalse();
        send("a/b", "m2");
        assertThat(log.sent).extracting(FakeLog.Sent::partition).containsExactly(partition("a/b", 4), partition("a/b", 2));
    }

    @Test
    void aBrokerAnsweringTheCountFromBeforeTheGrowthDoesNotUndoIt() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 0);
        log.count = 4;
        partitioner.refresh();
        assertThat(partitioner.advance()).isTrue();
        log.count = 2; // a broker whose metadata lags
        partitioner.refresh();
        log.count = 4;
        partitioner.refresh();
        assertThat(partitioner.moving()).isFalse();
        send(moving, "1");
        assertThat(log.sent).extracting(FakeLog.Sent::partition).containsExactly(partition(moving, 4));
        assertThat(outcomes).containsExactly("2 -> 4 in order");
    }

    @Test
    void whenTheProducerCannotLearnTheNewPartitionsOnlyOneHeldSendWaitsForIt() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 1);
        log.count = 4;
        log.producerCount = 2;
        log.metadataFails = new org.apache.kafka.common.errors.TimeoutException("Topic tbmq.msg.all not present in metadata after 2000 ms");
        partitioner.refresh();
        List<String> failed = new ArrayList<>();
        for (String value : List.of("1", "2", "3")) {
            partitioner.send(moving.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), (p, offset, error) -> {
                if (error != null) {
                    failed.add(value + ": " + error.getMessage());
                }
            });
        }
        assertThat(partitioner.advance()).isFalse();
        assertThat(log.fetchedMetadataFor).as("sends that waited for the producer's metadata").containsExactly("1");
        assertThat(failed).as("the publishers hear why").containsExactly("1: Topic tbmq.msg.all not present in metadata after 2000 ms",
                "2: Topic tbmq.msg.all not present in metadata after 2000 ms", "3: Topic tbmq.msg.all not present in metadata after 2000 ms");
        assertThat(partitioner.held()).isZero();
    }

    @Test
    void aNodeStoppingOnceTheOldPartitionsAreRoutedKeptTheOrder() {
        log.count = 2;
        partitioner.refresh();
        log.count = 4;
        log.producerCount = 2;
        partitioner.refresh();
        assertThat(partitioner.advance()).as("waiting for the producer only").isFalse();
        partitioner.stop("the node is stopping");
        assertThat(partitioner.moving()).isFalse();
        assertThat(outcomes).containsExactly("2 -> 4 in order");
    }

    @Test
    void aNodeStoppingSendsWhatIsHeldInOrder() {
        log.count = 2;
        partitioner.refresh();
        String moving = topic(true, 0);
        send(moving, "1");
        log.count = 4;
        partitioner.refresh();
        send(moving, "2");
        send(moving, "3");
        partitioner.stop("the node is stopping");
        assertThat(partitioner.moving()).isFalse();
        assertThat(log.values(moving)).containsExactly("1", "2", "3");
        send(moving, "4");
        assertThat(acknowledged).containsExactly("1", "2", "3", "4");
        log.count = 8;
        partitioner.refresh();
        assertThat(partitioner.moving()).as("a stopped node holds nothing any more").isFalse();
        send(moving, "5");
        assertThat(acknowledged).endsWith("5");
    }

    @Test
    void whileKafkaIsSlowToAcknowledgeTheBoundsStillHold() throws Exception {
        java.util.concurrent.CountDownLatch acknowledgedInFlight = new java.util.concurrent.CountDownLatch(1);
        FakeLog slow = new FakeLog() {
            @Override
            public void flush() {
                try {
                    acknowledgedInFlight.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        MsgAllPartitioner p = new MsgAllPartitioner(slow, Duration.ofSeconds(10), 1_000, now::get,
                task -> Thread.ofPlatform().daemon().start(task));
        slow.count = 2;
        p.refresh();
        String moving = topic(true, 0);
        p.send(moving.getBytes(StandardCharsets.UTF_8), "1".getBytes(StandardCharsets.UTF_8), (x, o, e) -> {
        });
        slow.count = 4;
        p.refresh();
        p.send(moving.getBytes(StandardCharsets.UTF_8), "2".getBytes(StandardCharsets.UTF_8), (x, o, e) -> {
        });
        try {
            assertThat(p.advance()).as("where the old partitions end is not known yet").isFalse();
            now.addAndGet(Duration.ofSeconds(11).toNanos());
            assertThat(p.advance()).as("the longest wait passed while the flush still waits").isTrue();
            assertThat(slow.values(moving)).containsExactly("1", "2");
        } finally {
            acknowledgedInFlight.countDown();
        }
    }

    /**
     * Publishers on four threads, the count growing twice while they publish, and a router that
     * reads the partitions at uneven speeds and commits what it read: every topic's messages are
     * routed in the order they were published.
     */
    @Test
    void underConcurrentPublishersAndAnUnevenRouterEveryTopicIsRoutedInOrder() throws Exception {
        ConcurrentLog kafka = new ConcurrentLog();
        // A clock that stands still: the wait never ends early, however slow the machine.
        MsgAllPartitioner p = new MsgAllPartitioner(kafka, Duration.ofSeconds(1), 1L << 30, () -> 0L,
                task -> Thread.ofPlatform().daemon().start(task));
        kafka.count = 2;
        p.refresh();
        int perThread = 20_000;
        AtomicLong published = new AtomicLong();
        List<Thread> publishers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            publishers.add(Thread.ofPlatform().daemon().start(() -> {
                long[] seq = new long[8];
                java.util.Random random = new java.util.Random(thread);
                for (int i = 0; i < perThread; i++) {
                    int topic = random.nextInt(8);
                    String name = "t" + thread + "/" + topic;
                    p.send(name.getBytes(StandardCharsets.UTF_8), Long.toString(seq[topic]++).getBytes(StandardCharsets.UTF_8),
                            (x, offset, error) -> {
                            });
                    published.incrementAndGet();
                    if (random.nextInt(64) == 0) {
                        Thread.yield();
                    }
                }
            }));
        }
        Thread router = Thread.ofPlatform().daemon().start(kafka::route);
        for (int[] growth : new int[][] {{5, 10_000}, {11, 40_000}}) {
            while (published.get() < growth[1]) {
                Thread.sleep(1);
            }
            kafka.count = growth[0];
            p.refresh();
            assertThat(p.moving()).isTrue();
            while (!p.advance()) {
                Thread.sleep(1);
            }
        }
        for (Thread t : publishers) {
            t.join();
        }
        kafka.stopping = true;
        router.join(60_000);
        assertThat(router.isAlive()).as("the router read every partition to its end").isFalse();
        assertThat(kafka.routed).as("messages routed").isEqualTo(4L * perThread);
        assertThat(kafka.outOfOrder).as("routed before an earlier message of its topic").isEmpty();
    }

    /**
     * The move ends while publishers of moving topics still queue for it, the producer never having
     * learned the new partitions: every message is still sent and acknowledged, in order.
     */
    @Test
    void aMoveEndingWhilePublishersQueueForItLeavesNoMessageBehind() throws Exception {
        ConcurrentLog kafka = new ConcurrentLog();
        MsgAllPartitioner p = new MsgAllPartitioner(kafka, Duration.ofSeconds(10), 1L << 30, System::nanoTime, Runnable::run);
        kafka.count = 2;
        p.refresh();
        AtomicLong published = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean publishing = new java.util.concurrent.atomic.AtomicBoolean(true);
        List<Thread> publishers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            publishers.add(Thread.ofPlatform().daemon().start(() -> {
                long seq = 0;
                while (publishing.get()) {
                    String name = "t" + thread + "/" + (seq % 8);
                    p.send(name.getBytes(StandardCharsets.UTF_8), Long.toString(seq++ / 8).getBytes(StandardCharsets.UTF_8),
                            (x, offset, error) -> acked.incrementAndGet());
                    published.incrementAndGet();
                    if (seq % 8 == 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000); // about a million messages in all, not tens of millions
                    }
                }
            }));
        }
        Thread router = Thread.ofPlatform().daemon().start(kafka::route);
        for (int growth = 3; growth <= 5; growth++) {
            kafka.producerCount = kafka.count;
            kafka.count = growth;
            p.refresh();
            while (!p.advance()) {
                Thread.sleep(1);
            }
        }
        publishing.set(false);
        for (Thread t : publishers) {
            t.join();
        }
        kafka.stopping = true;
        router.join(60_000);
        assertThat(acked.get()).as("acknowledged of %d published", published.get()).isEqualTo(published.get());
        assertThat(kafka.routed).isEqualTo(published.get());
        assertThat(kafka.outOfOrder).isEmpty();
    }

    /** Partitions in memory, acknowledged at once, and a router that reads them unevenly and commits. */
    static final class ConcurrentLog implements MsgAllPartitioner.Log {
        volatile int count;
        final Map<Integer, List<String[]>> partitions = new java.util.concurrent.ConcurrentHashMap<>();
        final Map<Integer, Long> committed = new java.util.concurrent.ConcurrentHashMap<>();
        final Map<String, Long> lastRouted = new HashMap<>();
        final List<String> outOfOrder = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile boolean stopping;
        long routed;

        @Override
        public int partitionCount() {
            return count;
        }

        /** Partitions the producer knows; -1: as many as there are. */
        volatile int producerCount = -1;

        @Override
        public int producerPartitionCount() {
            return producerCount < 0 ? count : producerCount;
        }

        @Override
        public boolean send(int partition, byte[] key, byte[] value, KafkaSender.Acknowledged acknowledged) {
            List<String[]> records = partitions.computeIfAbsent(partition, x -> new ArrayList<>());
            long offset;
            synchronized (records) {
                records.add(new String[] {new String(key, StandardCharsets.UTF_8), new String(value, StandardCharsets.UTF_8)});
                offset = records.size() - 1;
            }
            acknowledged.acknowledged(partition, offset, null);
            return true;
        }

        @Override
        public void flush() {
        }

        @Override
        public Map<Integer, Long> endOffsets(int n) {
            Map<Integer, Long> ends = new HashMap<>();
            partitions.forEach((p, records) -> {
                synchronized (records) {
                    ends.put(p, (long) records.size());
                }
            });
            return ends;
        }

        @Override
        public Map<Integer, Long> routedUpTo() {
            return Map.copyOf(committed);
        }

        /** Reads one partition at a time, a random one, a random number of records: partitions fall behind each other. */
        void route() {
            java.util.Random random = new java.util.Random(7);
            while (!stopping || behind()) {
                Integer[] ps = partitions.keySet().toArray(Integer[]::new);
                if (ps.length == 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                    continue;
                }
                int p = ps[random.nextInt(ps.length)];
                List<String[]> records = partitions.get(p);
                long from = committed.getOrDefault(p, 0L);
                long to;
                synchronized (records) {
                    to = Math.min(records.size(), from + random.nextInt(20));
                    for (long o = from; o < to; o++) {
                        String[] r = records.get((int) o);
                        long seq = Long.parseLong(r[1]);
                        Long last = lastRouted.put(r[0], seq);
                        if (last != null && seq < last) {
                            outOfOrder.add(r[0] + ": " + seq + " after " + last);
                        }
                        routed++;
                    }
                }
                committed.put(p, to);
                if (to == from) {
                    java.util.concurrent.locks.LockSupport.parkNanos(10_000);
                }
            }
        }

        private boolean behind() {
            return partitions.entrySet().stream().anyMatch(e -> {
                synchronized (e.getValue()) {
                    return committed.getOrDefault(e.getKey(), 0L) < e.getValue().size();
                }
            });
        }

    }
}
