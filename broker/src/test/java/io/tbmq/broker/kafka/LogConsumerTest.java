package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.log.LogRecord;
import io.tbmq.broker.log.Outcome;

/**
 * A partition handed from one member of the routing group to the next, with Kafka's group
 * coordinator played by a shared offsets map: whatever the first member processed, its successor
 * must not process again when the hand-over was clean (a rebalance, a member stopping on purpose),
 * even when the first member's asynchronous commits were refused meanwhile, as Kafka refuses them
 * while a rebalance is in progress (the duplicate delivery a clean-clone CI run saw).
 */
class LogConsumerTest {
    private static final String TOPIC = "tbmq.msg.all";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
    private static final TopicPartition P1 = new TopicPartition(TOPIC, 1);

    /** The group coordinator's committed offsets. */
    private final Map<TopicPartition, OffsetAndMetadata> group = new ConcurrentHashMap<>();
    /** Every record any member handled, as partition/offset. */
    private final List<String> handled = new CopyOnWriteArrayList<>();
    /** The handled records a member was told may have been processed before. */
    private final List<String> replayed = new CopyOnWriteArrayList<>();
    /** Records handled while their partition had no commit at all: its first reader had not marked it yet. */
    private final List<String> handledUnmarked = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<LogConsumer> consumers = new ArrayList<>();

    @AfterEach
    void stopConsumers() throws InterruptedException {
        consumers.forEach(LogConsumer::stop);
        for (Thread t : threads) {
            t.join(5_000);
        }
    }

    @Test
    void aPartitionMovedAfterRefusedAsyncCommitsIsNotProcessedTwice() throws Exception {
        Member first = new Member();
        first.refuseAsyncCommits = true;
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 7);
        });
        awaitHandled(7);
        // Another node joins: the partition moves while every commit so far was refused.
        assertThat(progress()).as("no async commit got through").isEmpty();
        first.step(() -> first.rebalance(List.of()));
        routing.stop();

        Member next = successor();
        start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 20);
        });
        awaitHandled(20);
        assertThat(handled).as("every record once").containsExactlyElementsOf(range(P0, 0, 20));
    }

    @Test
    void aConsumerThatStopsOnAnErrorSaysWhyAndOneStoppedOnPurposeDoesNot() throws Exception {
        Member failing = new Member();
        LogConsumer broken = start(failing, Duration.ZERO);
        failing.step(() -> failing.rebalance(List.of(P0, P1)));
        assertThat(broken.failure()).isNull();
        // Say the group fenced this member: the thread ends, and its partitions would go unread.
        failing.step(() -> failing.setPollException(new org.apache.kafka.common.KafkaException("fenced by the group")));
        threads.get(0).join(5_000);
        assertThat(threads.get(0).isAlive()).isFalse();
        assertThat(broken.failure()).hasMessageContaining("fenced by the group");

        Member healthy = new Member();
        LogConsumer stopped = start(healthy, Duration.ZERO);
        healthy.step(() -> healthy.rebalance(List.of(P0, P1)));
        stopped.stop();
        threads.get(1).join(5_000);
        assertThat(threads.get(1).isAlive()).isFalse();
        assertThat(stopped.failure()).as("a stop on purpose is no failure").isNull();
    }

    @Test
    void aConsumerStoppingOnPurposeCommitsWhatItProcessedBeforeLeaving() throws Exception {
        Member first = new Member();
        // No periodic commit happens in this test: everything rests on the one made when leaving.
        LogConsumer routing = start(first, Duration.ofHours(1));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 5);
            records(first, P1, 0, 3);
        });
        awaitHandled(8);
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(group).containsEntry(P0, handedOver(5)).containsEntry(P1, handedOver(3));

        Member next = successor();
        start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0, P1));
            records(next, P0, 0, 6);
            records(next, P1, 0, 4);
        });
        awaitHandled(10);
        assertThat(handled).doesNotHaveDuplicates();
        assertThat(handled.subList(8, 10)).as("only what arrived after the stop").containsExactlyInAnyOrder("0@5", "1@3");
    }

    @Test
    void aRevocationRefusedWhileTheGroupCompletesAnotherRebalanceIsRetried() throws Exception {
        Member first = new Member();
        first.refuseAsyncCommits = true;
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 4);
            records(first, P1, 0, 2);
        });
        awaitHandled(6);
        first.refuseSyncCommits = 3;
        // Cooperative: only P1 moves; P0 stays and its offsets stay owed until a commit succeeds.
        first.step(() -> first.rebalance(List.of(P0)));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> handedOver(2).equals(group.get(P1)));
        assertThat(progress()).containsEntry(P1, handedOver(2)).doesNotContainKey(P0);
        first.refuseAsyncCommits = false;
        first.step(() -> records(first, P0, 4, 5));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> new OffsetAndMetadata(5).equals(group.get(P0)));
        routing.stop();
    }

    @Test
    void partitionsLostToTheGroupAreNotCommittedByTheMemberThatLostThem() throws Exception {
        Member first = new Member();
        first.refuseAsyncCommits = true;
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 3);
        });
        awaitHandled(3);
        // Expelled (missed heartbeats): another member owns P0 now and commits for itself.
        first.step(() -> first.lose(List.of(P0)));
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(first.commitsWhileLosing).as("no commit tried for partitions another member owns").isZero();
        assertThat(progress()).as("nothing committed for a partition this member no longer owned").isEmpty();
    }

    @Test
    void theSuccessorOfACrashedMemberTreatsWhatItMayHaveProcessedAsReplays() throws Exception {
        // The crashed member's last periodic commit said 3; the partition held 10 records then.
        group.put(P0, new OffsetAndMetadata(3));
        Member next = successor();
        next.updateEndOffsets(Map.of(P0, 10L));
        start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 12);
        });
        awaitHandled(9);
        assertThat(handled).containsExactly("0@3", "0@4", "0@5", "0@6", "0@7", "0@8", "0@9", "0@10", "0@11");
        assertThat(replayed).as("possibly delivered before the crash: their copies carry DUP")
                .containsExactly("0@3", "0@4", "0@5", "0@6", "0@7", "0@8", "0@9");
    }

    @Test
    void theFirstReaderOfAPartitionTreatsNothingAsAReplayAndMarksItRead() throws Exception {
        // A new cluster: producers wrote 10 records before any member of the group read the partition.
        Member first = new Member();
        first.updateEndOffsets(Map.of(P0, 10L, P1, 0L));
        start(first, Duration.ofHours(1));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 12);
        });
        awaitHandled(12);
        assertThat(replayed).as("never delivered before: no copy carries DUP").isEmpty();
        assertThat(handledUnmarked).isEmpty();
        assertThat(group).as("marked before any record was processed")
                .containsEntry(P0, new OffsetAndMetadata(0, LogConsumer.STARTED))
                .containsEntry(P1, new OffsetAndMetadata(0, LogConsumer.STARTED));
    }

    @Test
    void theSuccessorOfAMemberThatCrashedBeforeItsFirstCommitTreatsWhatItReadAsReplays() throws Exception {
        Member first = new Member();
        first.refuseAsyncCommits = true;
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 5);
        });
        awaitHandled(5);
        // Expelled before any of its commits got through: only the start marker is left behind.
        first.step(() -> first.lose(List.of(P0)));
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(group).containsExactly(Map.entry(P0, new OffsetAndMetadata(0, LogConsumer.STARTED)));

        Member next = successor();
        next.updateEndOffsets(Map.of(P0, 5L));
        start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 7);
        });
        awaitHandled(12);
        assertThat(replayed).as("possibly delivered by the crashed member: their copies carry DUP")
                .containsExactly("0@0", "0@1", "0@2", "0@3", "0@4");
    }

    @Test
    void aPartitionWhoseStartMarkerCannotBeCommittedYetIsNotReadUntilItIs() throws Exception {
        Member first = new Member();
        first.refuseSyncCommits = 1;
        start(first, Duration.ofHours(1));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 3);
        });
        awaitHandled(3);
        assertThat(handledUnmarked).as("read again only once the marker is committed, a second later").isEmpty();
        assertThat(replayed).isEmpty();
        assertThat(group).containsEntry(P0, new OffsetAndMetadata(0, LogConsumer.STARTED));
    }

    @Test
    void aSuccessorThatCannotLookUpTheHandOverAtOnceStillMarksTheReplays() throws Exception {
        group.put(P0, new OffsetAndMetadata(3));
        Member next = successor();
        next.failCommittedReads = 2;
        next.updateEndOffsets(Map.of(P0, 10L));
        start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 12);
        });
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> handled.size() >= 9);
        assertThat(handled).containsExactly("0@3", "0@4", "0@5", "0@6", "0@7", "0@8", "0@9", "0@10", "0@11");
        assertThat(replayed).as("not read before it was known what it replays")
                .containsExactly("0@3", "0@4", "0@5", "0@6", "0@7", "0@8", "0@9");
    }

    @Test
    void aPartitionWhoseHandOverWasNeverLookedUpIsHandedOnWithItsCommitAsItWas() throws Exception {
        group.put(P0, new OffsetAndMetadata(3));
        Member next = successor();
        next.failCommittedReads = Integer.MAX_VALUE;
        next.updateEndOffsets(Map.of(P0, 10L));
        LogConsumer routing = start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 12);
        });
        Thread.sleep(300);
        assertThat(routing.stalledSeconds()).as("not read: stalled, though nothing is in flight").isGreaterThan(0.2);
        next.step(() -> next.rebalance(List.of()));
        assertThat(routing.stalledSeconds()).isZero();
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(handled).as("nothing read while it was not known what it replays").isEmpty();
        assertThat(group).as("still the crashed member's commit, not a hand-over over records nobody redelivered")
                .containsExactly(Map.entry(P0, new OffsetAndMetadata(3)));
    }

    @Test
    void aStartMarkerStoredThoughItsCommitTimedOutIsStillThisMembersOwn() throws Exception {
        Member first = new Member();
        first.storeButTimeOutSyncCommits = 1;
        first.updateEndOffsets(Map.of(P0, 3L));
        start(first, Duration.ofHours(1));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 3);
        });
        awaitHandled(3);
        assertThat(replayed).as("the marker found is the one this member sent: nobody read the partition").isEmpty();
    }

    @Test
    void aStopWhileTheHandOverIsLookedUpLeavesThePredecessorsCommitAsItWas() throws Exception {
        group.put(P0, new OffsetAndMetadata(3));
        Member next = successor();
        next.updateEndOffsets(Map.of(P0, 10L));
        LogConsumer routing = start(next, Duration.ZERO);
        next.onCommittedRead = () -> {
            routing.stop();
            throw new org.apache.kafka.common.errors.WakeupException();
        };
        next.schedulePollTask(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 12);
        });
        threads.get(0).join(5_000);
        assertThat(threads.get(0).isAlive()).isFalse();
        assertThat(handled).isEmpty();
        assertThat(group).as("not marked a hand-over: records 3-9 may have gone out before the crash")
                .containsExactly(Map.entry(P0, new OffsetAndMetadata(3)));
    }

    @Test
    void aConsumerStoppingWithABatchStillUnfinishedLeavesItToItsSuccessor() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ofHours(1), 100, Duration.ofMillis(500), Map.of("0@2", held));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P0, 2, 4));
        awaitHandled(4);
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(group).as("up to the unfinished batch, not overwritten by the revocation Kafka's close makes")
                .containsEntry(P0, new OffsetAndMetadata(2));
    }

    @Test
    void theStallGaugeForgetsWhatWaitedOnAPartitionHandedOn() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ofHours(1), 100, Duration.ofSeconds(2), Map.of("0@2", held));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P0, 2, 4));
        awaitHandled(4);
        Thread.sleep(200);
        assertThat(routing.stalledSeconds()).isGreaterThan(0.1);
        // P0 moves with its unfinished batch; P1, kept, has nothing waiting.
        first.step(() -> first.rebalance(List.of(P1)));
        assertThat(routing.stalledSeconds()).isZero();
        routing.stop();
    }

    @Test
    void theStallGaugeForgetsRecordsToBeReadAgainOnAPartitionHandedOn() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> failed = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ZERO, 100, Duration.ofSeconds(30), Map.of("0@0", failed));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 2);
        });
        awaitHandled(2);
        failed.completeExceptionally(new IllegalStateException("Redis refused (test)"));
        // Sought back to 0@0, to be read again; before it is, the partition moves.
        Thread.sleep(300);
        assertThat(routing.stalledSeconds()).isGreaterThan(0.2);
        first.step(() -> first.rebalance(List.of(P1)));
        assertThat(routing.stalledSeconds()).isZero();
        routing.stop();
    }

    @Test
    void theStallGaugeKeepsCountingRecordsToBeReadAgainOnAPartitionKept() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> failed = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ZERO, 100, Duration.ofSeconds(30),
                Map.of("0@0", failed, "1@0", new CompletableFuture<>()));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(4);
        failed.completeExceptionally(new IllegalStateException("Redis refused (test)"));
        // Both sought back; P0 moves before they are read again, P1 stays and still waits.
        Thread.sleep(300);
        first.step(() -> first.rebalance(List.of(P1)));
        assertThat(routing.stalledSeconds()).isGreaterThan(0.2);
        routing.stop();
    }

    @Test
    void aStopRightAfterAStartMarkerTimedOutHandsThePartitionOnAsItWasFound() throws Exception {
        Member first = new Member();
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 4);
        });
        awaitHandled(4);
        routing.stop();
        threads.get(0).join(5_000);

        Member second = successor();
        second.storeButTimeOutSyncCommits = 1;
        LogConsumer next = start(second, Duration.ZERO);
        second.step(() -> second.rebalance(List.of(P0)));
        assertThat(group).as("the marker was stored").containsEntry(P0, new OffsetAndMetadata(4, LogConsumer.STARTED));
        next.stop();
        threads.get(1).join(5_000);
        assertThat(group).as("nothing was read here: the next owner must not mark anything DUP").containsEntry(P0, handedOver(4));
    }

    @Test
    void theStallGaugeCountsRecordsToBeReadAgainThoughOtherPartitionsFinish() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> failed = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ZERO, 100, Duration.ofSeconds(30), Map.of("0@0", failed));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(4);
        Thread.sleep(300);
        failed.completeExceptionally(new IllegalStateException("a write that keeps failing (test)"));
        // Both sought back; P1's records come back first and finish, P0's still wait to be read again.
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(6);
        assertThat(routing.stalledSeconds()).as("P0's records have waited since they were first handed over").isGreaterThan(0.3);
        routing.stop();
    }

    @Test
    void theStallGaugeCountsRecordsToBeReadAgainUntilTheLastOfThemIsBack() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> failed = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ZERO, 100, Duration.ofSeconds(30), Map.of("0@0", failed));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 4);
        });
        awaitHandled(4);
        Thread.sleep(300);
        failed.completeExceptionally(new IllegalStateException("a write that keeps failing (test)"));
        // Read again in two polls: the first half comes back and finishes, the second still waits.
        first.step(() -> records(first, P0, 0, 2));
        awaitHandled(6);
        assertThat(routing.stalledSeconds()).as("0@2 and 0@3 have waited since they were first handed over").isGreaterThan(0.3);
        first.step(() -> records(first, P0, 2, 4));
        awaitHandled(8);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> routing.stalledSeconds() == 0);
        routing.stop();
    }

    @Test
    void aStopWhileALookupIsRetriedLosesNoRecordPolledBeforeIt() throws Exception {
        Member first = new Member();
        first.lockstep = true;
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 3);
        });
        awaitHandled(3);
        // P1 comes, and its lookup fails: it is looked up again a second later.
        first.failCommittedReads = 1;
        first.step(() -> first.rebalance(List.of(P0, P1)));
        Thread.sleep(1_100);
        first.onCommittedRead = () -> {
            routing.stop();
            throw new org.apache.kafka.common.errors.WakeupException();
        };
        // Polled in the loop whose lookup the stop wakes up.
        first.step(() -> records(first, P0, 3, 6));
        threads.get(0).join(5_000);
        assertThat(threads.get(0).isAlive()).isFalse();
        OffsetAndMetadata p0 = group.get(P0);
        assertThat(handled).as("every record below the commit was handed to the handler, committed at %s", p0)
                .containsAll(range(P0, 0, (int) p0.offset()));
    }

    @Test
    void aPartitionHandedOnBeforeItsPredecessorsPossibleReplaysWereReadAgainIsNotMarkedClean() throws Exception {
        group.put(P0, new OffsetAndMetadata(3));
        Member next = successor();
        next.updateEndOffsets(Map.of(P0, 10L));
        LogConsumer routing = start(next, Duration.ofHours(1));
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 6);
        });
        awaitHandled(3);
        next.step(() -> next.rebalance(List.of()));
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(group).as("records 6-9 may have gone out before the crash: the next owner must mark them DUP")
                .containsExactly(Map.entry(P0, new OffsetAndMetadata(6)));

        Member third = successor();
        third.updateEndOffsets(Map.of(P0, 10L));
        start(third, Duration.ZERO);
        third.step(() -> {
            third.rebalance(List.of(P0));
            records(third, P0, 6, 11);
        });
        awaitHandled(8);
        assertThat(replayed).containsExactly("0@3", "0@4", "0@5", "0@6", "0@7", "0@8", "0@9");
    }

    @Test
    void aPartitionWhoseCommitsExpiredAfterRetentionRemovedRecordsIsTreatedAsLeftByACrash() throws Exception {
        // The group was empty longer than Kafka keeps its offsets, and retention removed records 0-3 meanwhile.
        Member next = successor();
        next.updateBeginningOffsets(Map.of(P0, 4L));
        next.updateEndOffsets(Map.of(P0, 8L));
        start(next, Duration.ofHours(1));
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 4, 9);
        });
        awaitHandled(5);
        assertThat(replayed).containsExactly("0@4", "0@5", "0@6", "0@7");
        assertThat(group).containsEntry(P0, new OffsetAndMetadata(4, LogConsumer.STARTED));
    }

    @Test
    void theSuccessorOfAMemberThatCrashedAfterACleanHandOverTreatsWhatItReadAsReplays() throws Exception {
        Member first = new Member();
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 4);
        });
        awaitHandled(4);
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(group).containsEntry(P0, handedOver(4));

        // The next owner delivers 4-6, none of its commits gets through, and it is expelled.
        Member second = successor();
        second.refuseAsyncCommits = true;
        LogConsumer next = start(second, Duration.ZERO);
        second.step(() -> {
            second.rebalance(List.of(P0));
            records(second, P0, 4, 7);
        });
        awaitHandled(7);
        second.step(() -> second.lose(List.of(P0)));
        next.stop();
        threads.get(1).join(5_000);
        assertThat(group).as("the clean hand-over's mark was replaced before anything was read")
                .containsEntry(P0, new OffsetAndMetadata(4, LogConsumer.STARTED));

        Member third = successor();
        third.updateEndOffsets(Map.of(P0, 7L));
        start(third, Duration.ZERO);
        third.step(() -> {
            third.rebalance(List.of(P0));
            records(third, P0, 4, 8);
        });
        awaitHandled(11);
        assertThat(replayed).as("delivered by the member that crashed: their copies carry DUP").containsExactly("0@4", "0@5", "0@6");
    }

    @Test
    void theSuccessorOfACleanHandOverTreatsNothingAsAReplay() throws Exception {
        Member first = new Member();
        LogConsumer routing = start(first, Duration.ZERO);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 7);
        });
        awaitHandled(7);
        routing.stop();
        threads.get(0).join(5_000);
        assertThat(group.get(P0).metadata()).isEqualTo(LogConsumer.HANDED_OVER);

        Member next = successor();
        next.updateEndOffsets(Map.of(P0, 10L));
        start(next, Duration.ZERO);
        next.step(() -> {
            next.rebalance(List.of(P0));
            records(next, P0, 0, 10);
        });
        awaitHandled(10);
        assertThat(replayed).isEmpty();
    }

    @Test
    void aBatchWaitingForTheStoreDoesNotHoldUpTheBatchesBehindIt() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        start(first, Duration.ZERO, 100, Duration.ofSeconds(30), Map.of("0@0", held));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 3);
        });
        awaitHandled(3);
        first.step(() -> records(first, P1, 0, 4));
        first.step(() -> records(first, P0, 3, 5));
        awaitHandled(9);
        assertThat(handled).as("read on past the batch waiting for the store").containsExactlyElementsOf(
                List.of("0@0", "0@1", "0@2", "1@0", "1@1", "1@2", "1@3", "0@3", "0@4"));
        first.step(() -> { });
        assertThat(progress()).as("nothing committed past the oldest unfinished batch").isEmpty();

        held.complete(null);
        Awaitility.await().atMost(5, TimeUnit.SECONDS)
                .until(() -> new OffsetAndMetadata(5).equals(group.get(P0)) && new OffsetAndMetadata(4).equals(group.get(P1)));
        assertThat(replayed).isEmpty();
    }

    @Test
    void aFullReadAheadWaitsForTheOldestBatch() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        start(first, Duration.ZERO, 2, Duration.ofSeconds(30), Map.of("0@0", held));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P0, 2, 4));
        awaitHandled(4);
        // Two records past the oldest unfinished batch: the consumer waits for it before polling again.
        records(first, P0, 4, 6);
        Thread.sleep(300);
        assertThat(handled).hasSize(4);
        held.complete(null);
        awaitHandled(6);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> new OffsetAndMetadata(6).equals(group.get(P0)));
    }

    @Test
    void withoutReadAheadEachBatchIsFinishedBeforeTheNextPoll() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        start(first, Duration.ZERO, 0, Duration.ofSeconds(30), Map.of("0@0", held));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 2);
        });
        awaitHandled(2);
        records(first, P0, 2, 3);
        Thread.sleep(300);
        assertThat(handled).hasSize(2);
        held.complete(null);
        awaitHandled(3);
    }

    @Test
    void aFailedBatchIsReadAgainWithEveryBatchAfterItAsPossibleReplays() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        CompletableFuture<Void> later = new CompletableFuture<>();
        LogConsumer routing = start(first, Duration.ZERO, 100, Duration.ofSeconds(30), Map.of("0@0", held, "1@0", later));
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 3);
        });
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(5);
        Thread.sleep(300);
        held.completeExceptionally(new IllegalStateException("Redis refused (test)"));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(later::isDone);
        assertThat(later).as("a later batch is given up, so it stops retrying").isCancelled();
        assertThat(routing.stalledSeconds()).as("given up and read again is no progress").isGreaterThanOrEqualTo(0.3);
        // Kafka returns the records again from where the consumer sought back to.
        first.step(() -> {
            records(first, P0, 0, 3);
            records(first, P1, 0, 2);
        });
        awaitHandled(10);
        assertThat(handled.subList(5, 10)).containsExactlyInAnyOrder("0@0", "0@1", "0@2", "1@0", "1@1");
        assertThat(replayed).as("their in-memory copies went out already: read again, they carry DUP")
                .containsExactlyInAnyOrder("0@0", "0@1", "0@2", "1@0", "1@1");
        Awaitility.await().atMost(5, TimeUnit.SECONDS)
                .until(() -> new OffsetAndMetadata(3).equals(group.get(P0)) && new OffsetAndMetadata(2).equals(group.get(P1)));
        assertThat(routing.stalledSeconds()).isZero();
    }

    @Test
    void aBatchWaitingOnlyForTheStoreIsNotReadAgainAfterTheBatchTimeout() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> stored = new CompletableFuture<>();
        // Its in-memory copies went out at once; its DEVICE copies wait for a full Redis master.
        LogConsumer routing = startWithOutcomes(first, Duration.ZERO, 100, Duration.ofMillis(300),
                Map.of("0@0", new Outcome(CompletableFuture.completedFuture(null), stored)), LogConsumer.Rest.NEVER);
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 3);
        });
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(5);
        Thread.sleep(1_000);
        first.step(() -> records(first, P0, 3, 4));
        awaitHandled(6);
        assertThat(stored).as("still being written, not given up at 300 ms").isNotDone();
        assertThat(replayed).as("nothing read again, so no copy goes out twice").isEmpty();
        assertThat(progress()).as("nothing committed past the batch waiting for the store").isEmpty();
        assertThat(routing.stalledSeconds()).as("stalled since the first batch, though later ones finished").isGreaterThan(1.0);

        stored.complete(null);
        Awaitility.await().atMost(5, TimeUnit.SECONDS)
                .until(() -> new OffsetAndMetadata(4).equals(group.get(P0)) && new OffsetAndMetadata(2).equals(group.get(P1)));
        assertThat(handled).containsExactlyElementsOf(List.of("0@0", "0@1", "0@2", "1@0", "1@1", "0@3"));
        assertThat(routing.stalledSeconds()).as("nothing waits any more").isZero();
    }

    @Test
    void aBatchWhoseOtherCopiesAreNotOutIsStillReadAgainAfterTheBatchTimeout() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> stored = new CompletableFuture<>();
        // An APPLICATION client's copy that Kafka has not acknowledged: reading the batch again sends it again.
        startWithOutcomes(first, Duration.ZERO, 100, Duration.ofMillis(300),
                Map.of("0@0", new Outcome(new CompletableFuture<>(), stored)), LogConsumer.Rest.NEVER);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 3);
        });
        awaitHandled(3);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(stored::isDone);
        assertThat(stored).as("given up: its writes stop").isCancelled();
        first.step(() -> records(first, P0, 0, 3));
        awaitHandled(6);
        assertThat(replayed).containsExactly("0@0", "0@1", "0@2");
    }

    @Test
    void aBatchFailingBehindOneWaitingForTheStoreIsReadAgainWithIt() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> stored = new CompletableFuture<>();
        CompletableFuture<Void> later = new CompletableFuture<>();
        startWithOutcomes(first, Duration.ZERO, 100, Duration.ofMillis(300),
                Map.of("0@0", new Outcome(CompletableFuture.completedFuture(null), stored),
                        "1@0", new Outcome(CompletableFuture.completedFuture(null), later)),
                LogConsumer.Rest.NEVER);
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(4);
        Thread.sleep(600);
        assertThat(stored).as("past the batch timeout, waiting for the store").isNotDone();
        // Unnoticed, the failed batch would wait for as long as the store refuses the oldest one.
        later.completeExceptionally(new IllegalStateException("Kafka refused a stored copy for another node's downlink (test)"));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(stored::isDone);
        assertThat(stored).as("read again from the oldest batch, whose writes must stay ahead of the later ones").isCancelled();
        first.step(() -> {
            records(first, P0, 0, 2);
            records(first, P1, 0, 2);
        });
        awaitHandled(8);
        assertThat(replayed).containsExactlyInAnyOrder("0@0", "0@1", "1@0", "1@1");
        Awaitility.await().atMost(5, TimeUnit.SECONDS)
                .until(() -> new OffsetAndMetadata(2).equals(group.get(P0)) && new OffsetAndMetadata(2).equals(group.get(P1)));
    }

    @Test
    void aFullReadAheadBehindABatchWaitingForTheStoreKeepsPollingWithThePartitionsPaused() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> stored = new CompletableFuture<>();
        startWithOutcomes(first, Duration.ZERO, 2, Duration.ofMillis(300),
                Map.of("0@0", new Outcome(CompletableFuture.completedFuture(null), stored)), LogConsumer.Rest.NEVER);
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P0, 2, 4));
        awaitHandled(4);
        records(first, P0, 4, 6);
        Thread.sleep(800);
        int polls = first.polls;
        Thread.sleep(500);
        // A member that stops polling is expelled from its group after max.poll.interval.ms.
        assertThat(first.polls).as("still polling while it waits for the store").isGreaterThan(polls);
        assertThat(first.paused()).as("with its partitions paused").containsExactly(P0);
        assertThat(handled).as("nothing read past the read-ahead").hasSize(4);
        assertThat(stored).isNotDone();

        stored.complete(null);
        awaitHandled(6);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> new OffsetAndMetadata(6).equals(group.get(P0)));
        assertThat(first.paused()).isEmpty();
        assertThat(replayed).isEmpty();
    }

    @Test
    void aBatchWaitingForTheStoreOnAPartitionLostToTheGroupNoLongerHoldsTheConsumer() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> stored = new CompletableFuture<>();
        startWithOutcomes(first, Duration.ZERO, 2, Duration.ofMillis(300),
                Map.of("0@0", new Outcome(CompletableFuture.completedFuture(null), stored)), LogConsumer.Rest.NEVER);
        first.step(() -> {
            first.rebalance(List.of(P0, P1));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P1, 0, 2));
        awaitHandled(4);
        Thread.sleep(600);
        assertThat(first.paused()).as("held behind the batch waiting for the store").isNotEmpty();
        // Expelled from the group: P0 is another member's now, and so is waiting for its batch.
        first.step(() -> first.lose(List.of(P0)));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(stored::isDone);
        assertThat(stored).as("given up").isCancelled();
        first.step(() -> records(first, P1, 0, 3));
        awaitHandled(7);
        // (MockConsumer, unlike Kafka's, still lists the lost partition as paused.)
        assertThat(first.paused()).as("reading its own partition again").doesNotContain(P1);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> new OffsetAndMetadata(3).equals(group.get(P1)));
    }

    @Test
    void aHandOverWithABatchStillUnfinishedIsNotMarkedClean() throws Exception {
        Member first = new Member();
        CompletableFuture<Void> held = new CompletableFuture<>();
        // Long enough that the batch is still waited for when the revocation comes on a loaded machine
        // (500 ms was not always), short enough that the revocation's wait for it fits in a step.
        LogConsumer routing = start(first, Duration.ofHours(1), 100, Duration.ofSeconds(3), Map.of("0@2", held));
        first.step(() -> {
            first.rebalance(List.of(P0));
            records(first, P0, 0, 2);
        });
        first.step(() -> records(first, P0, 2, 4));
        awaitHandled(4);
        first.step(() -> first.rebalance(List.of()));
        assertThat(group).as("committed up to the unfinished batch, without the hand-over mark")
                .containsEntry(P0, new OffsetAndMetadata(2));
        assertThat(held).as("given up: its writes stop").isCancelled();
        routing.stop();
    }

    @Test
    void aConsumerNobodyCanWriteToStopsFetchingAndFetchesAgainWhenThatChanges() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean alone = new java.util.concurrent.atomic.AtomicBoolean(true);
        Member member = new Member();
        start(member, new LogConsumer.Rest(alone::get, Duration.ofHours(1)));
        member.step(() -> member.rebalance(List.of(P0)));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> member.paused().contains(P0));
        member.step(() -> records(member, P0, 0, 3));
        // Several polls later, the records are still in the log: nothing was fetched.
        for (int i = 0; i < 5; i++) {
            member.step(() -> { });
        }
        assertThat(handled).isEmpty();
        alone.set(false);
        awaitHandled(3);
        assertThat(member.paused()).isEmpty();
    }

    @Test
    void aRestingConsumerStillLooksNowAndThen() throws Exception {
        Member member = new Member();
        start(member, new LogConsumer.Rest(() -> true, Duration.ofMillis(100)));
        member.step(() -> member.rebalance(List.of(P0)));
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> member.paused().contains(P0));
        member.step(() -> records(member, P0, 0, 3));
        awaitHandled(3);
    }

    @Test
    void aConsumerThatMayNotRestNeverStopsFetching() throws Exception {
        Member member = new Member();
        start(member, new LogConsumer.Rest(() -> false, Duration.ofMillis(1)));
        member.step(() -> member.rebalance(List.of(P0)));
        List<Boolean> pausedSeen = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 10; i++) {
            member.step(() -> pausedSeen.add(!member.paused().isEmpty()));
        }
        assertThat(pausedSeen).containsOnly(false);
        member.step(() -> records(member, P0, 0, 3));
        awaitHandled(3);
    }

    @Test
    void aConsumerStillJoiningItsGroupDoesNotCountAsQuiet() throws Exception {
        Member member = new Member();
        // Three empty polls after the assignment would rightly let it rest: the records must come in the very next poll.
        member.lockstep = true;
        start(member, new LogConsumer.Rest(() -> true, Duration.ofHours(1)));
        // Polls with no partition yet (the group still forming), then a partition with a backlog.
        for (int i = 0; i < 5; i++) {
            member.step(() -> { });
        }
        member.step(() -> member.rebalance(List.of(P0)));
        member.step(() -> records(member, P0, 0, 3));
        awaitHandled(3);
    }

    private static OffsetAndMetadata handedOver(long offset) {
        return new OffsetAndMetadata(offset, LogConsumer.HANDED_OVER);
    }

    private LogConsumer start(Member member, Duration commitInterval) {
        return start(member, commitInterval, 0, Duration.ofSeconds(5), Map.of());
    }

    private LogConsumer start(Member member, LogConsumer.Rest rest) {
        return start(member, Duration.ZERO, 0, Duration.ofSeconds(5), Map.of(), rest);
    }

    private LogConsumer start(Member member, Duration commitInterval, int readAhead, Duration handlerTimeout,
            Map<String, CompletableFuture<Void>> futures) {
        return start(member, commitInterval, readAhead, handlerTimeout, futures, LogConsumer.Rest.NEVER);
    }

    /** A handler done at once, except for the batch starting at a record named in {@code futures} ("partition@offset"), done with that future. */
    private LogConsumer start(Member member, Duration commitInterval, int readAhead, Duration handlerTimeout,
            Map<String, CompletableFuture<Void>> futures, LogConsumer.Rest rest) {
        Map<String, Outcome> outcomes = new HashMap<>();
        futures.forEach((at, f) -> outcomes.put(at, Outcome.of(f)));
        return startWithOutcomes(member, commitInterval, readAhead, handlerTimeout, outcomes, rest);
    }

    /** {@link #start} with the outcomes of the batches named, which may be sent before they are done. */
    private LogConsumer startWithOutcomes(Member member, Duration commitInterval, int readAhead, Duration handlerTimeout,
            Map<String, Outcome> outcomes, LogConsumer.Rest rest) {
        Map<String, Outcome> once = new ConcurrentHashMap<>(outcomes);
        LogConsumer consumer = new LogConsumer(() -> member, TOPIC, (records, replays) -> {
            for (LogRecord r : records) {
                handled.add(r.partition() + "@" + r.offset());
                if (!group.containsKey(new TopicPartition(TOPIC, r.partition()))) {
                    handledUnmarked.add(r.partition() + "@" + r.offset());
                }
                if (replays.possible(r.partition(), r.offset())) {
                    replayed.add(r.partition() + "@" + r.offset());
                }
            }
            Outcome o = once.remove(records.get(0).partition() + "@" + records.get(0).offset());
            return o != null ? o : Outcome.of(CompletableFuture.completedFuture(null));
        }, handlerTimeout, commitInterval, readAhead, rest);
        consumers.add(consumer);
        Thread t = new Thread(consumer, "log-consumer-test-" + threads.size());
        t.setDaemon(true);
        threads.add(t);
        t.start();
        return consumer;
    }

    /** The committed offsets that record progress: the group's, less the first readers' start markers. */
    private Map<TopicPartition, OffsetAndMetadata> progress() {
        Map<TopicPartition, OffsetAndMetadata> progress = new HashMap<>(group);
        progress.values().removeIf(o -> LogConsumer.STARTED.equals(o.metadata()));
        return progress;
    }

    /** The partition's next owner: it starts where the group's committed offsets say. */
    private Member successor() {
        Member next = new Member();
        next.inherit(group);
        return next;
    }

    private void awaitHandled(int count) {
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> handled.size() >= count);
        assertThat(handled).hasSizeLessThanOrEqualTo(count);
    }

    private static void records(MockConsumer<byte[], byte[]> consumer, TopicPartition tp, int from, int to) {
        for (int offset = from; offset < to; offset++) {
            consumer.addRecord(new ConsumerRecord<>(tp.topic(), tp.partition(), offset, new byte[0], new byte[] {(byte) offset}));
        }
    }

    private static List<String> range(TopicPartition tp, int from, int to) {
        return IntStream.range(from, to).mapToObj(o -> tp.partition() + "@" + o).toList();
    }

    /** A member of the group whose commits reach the shared offsets, unless told to refuse them as Kafka does mid-rebalance. */
    private final class Member extends MockConsumer<byte[], byte[]> {
        volatile boolean refuseAsyncCommits;
        volatile int refuseSyncCommits;
        /** Reads of the committed offsets that time out, as when the group coordinator does not answer. */
        volatile int failCommittedReads;
        /** Synchronous commits stored by the coordinator whose answer times out on the way back. */
        volatile int storeButTimeOutSyncCommits;
        /** Run at the next read of the committed offsets (a stop arriving meanwhile, say). */
        volatile Runnable onCommittedRead;
        volatile int syncCommits;
        volatile int commitsWhileLosing;
        volatile boolean expelled;
        volatile int polls;
        /** One poll per step: the consumer thread cannot run polls of its own between two of the test's steps. */
        volatile boolean lockstep;
        private final java.util.concurrent.Semaphore stepsScheduled = new java.util.concurrent.Semaphore(0);
        private ConsumerRebalanceListener listener;
        private Map<TopicPartition, OffsetAndMetadata> inherited = Map.of();

        Member() {
            super("earliest");
            updateBeginningOffsets(Map.of(P0, 0L, P1, 0L));
        }

        /** As Kafka's close does (onLeavePrepare): the partitions still assigned are revoked, or lost once expelled. */
        @Override
        public void close(org.apache.kafka.clients.consumer.CloseOptions option) {
            List<TopicPartition> assigned = new ArrayList<>(assignment());
            if (listener != null && !assigned.isEmpty()) {
                if (expelled) {
                    listener.onPartitionsLost(assigned);
                } else {
                    listener.onPartitionsRevoked(assigned);
                }
            }
            super.close(option);
        }

        /** Starts from these committed offsets (MockConsumer forgets commits made before it subscribes). */
        void inherit(Map<TopicPartition, OffsetAndMetadata> offsets) {
            inherited = Map.copyOf(offsets);
        }

        @Override
        public synchronized void subscribe(Collection<String> topics, ConsumerRebalanceListener callback) {
            this.listener = callback;
            super.subscribe(topics, callback);
            super.commitAsync(inherited, null);
        }

        /** Runs {@code task} on the consumer's thread at its next poll and waits until it ran. */
        void step(Runnable task) throws InterruptedException {
            CountDownLatch ran = new CountDownLatch(1);
            schedulePollTask(() -> {
                task.run();
                ran.countDown();
            });
            stepsScheduled.release();
            assertThat(ran.await(5, TimeUnit.SECONDS)).as("the consumer polled").isTrue();
        }

        /** As Kafka does for an expelled member: onPartitionsLost, and its generation can commit nothing any more. */
        void lose(Collection<TopicPartition> partitions) {
            int before = syncCommits;
            listener.onPartitionsLost(partitions);
            commitsWhileLosing = syncCommits - before;
            expelled = true;
            List<TopicPartition> kept = new ArrayList<>(assignment());
            kept.removeAll(partitions);
            rebalance(kept);
        }

        @Override
        public org.apache.kafka.clients.consumer.ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
            try {
                if (lockstep) {
                    // Bounded all the same; stopping the consumer wakes it (below).
                    stepsScheduled.tryAcquire(10, TimeUnit.SECONDS);
                }
                synchronized (this) {
                    // A real poll waits for records; without this the test's consumer thread would spin.
                    wait(1);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            polls++;
            return super.poll(timeout);
        }

        @Override
        public void wakeup() {
            stepsScheduled.release();
            super.wakeup();
        }

        @Override
        public synchronized void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
            if (refuseAsyncCommits) {
                callback.onComplete(offsets, new RebalanceInProgressException("rebalance in progress (test)"));
                return;
            }
            group.putAll(offsets);
            super.commitAsync(offsets, callback);
        }

        @Override
        public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
            syncCommits++;
            if (expelled || !assignment().containsAll(offsets.keySet())) {
                throw new CommitFailedException("committing partitions this member does not own (test)");
            }
            if (refuseSyncCommits > 0) {
                refuseSyncCommits--;
                throw new RebalanceInProgressException("the group is completing another rebalance (test)");
            }
            group.putAll(offsets);
            super.commitAsync(offsets, null);
            if (storeButTimeOutSyncCommits > 0) {
                storeButTimeOutSyncCommits--;
                throw new org.apache.kafka.common.errors.TimeoutException("no answer in time, though the commit was stored (test)");
            }
        }

        @Override
        public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
            commitSync(offsets);
        }

        @Override
        public synchronized Map<TopicPartition, OffsetAndMetadata> committed(java.util.Set<TopicPartition> partitions,
                Duration timeout) {
            Runnable hook = onCommittedRead;
            if (hook != null) {
                onCommittedRead = null;
                hook.run();
            }
            if (failCommittedReads > 0) {
                failCommittedReads--;
                throw new org.apache.kafka.common.errors.TimeoutException("the group coordinator did not answer (test)");
            }
            return super.committed(partitions, timeout);
        }
    }
}
