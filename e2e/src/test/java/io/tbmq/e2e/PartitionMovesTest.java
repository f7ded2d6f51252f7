package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionMovesTest {
    private static final String GREW = " INFO  [io.tb.br.ka.MsgAllPartitioner] (tbmq-msg-all-partitions) tbmq.msg.all grew from 12 to 16 partitions: "
            + "topics that move wait until every node moved and their old partition is routed (at most 10000 ms)";
    private static final String DONE = " INFO  [io.tb.br.ka.MsgAllPartitioner] (tbmq-msg-all-partitions) tbmq.msg.all: every topic is on its "
            + "partition of 16 now (3 held messages sent in the last step)";
    private static final String LET_GO = " WARN  [io.tb.br.ka.MsgAllPartitioner] (tbmq-msg-all-partitions) tbmq.msg.all grew from 12 to 16 "
            + "partitions: 40 messages of topics that moved waited (10000 ms, the longest wait); they go on, and a subscriber may get "
            + "those topics' messages out of order once";

    @Test
    void readsEachBrokersMoveAndHowFarApartTheyWere(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("tbmq-broker-0-1a2b3c4d.log"), List.of("10:00:00.000 INFO  [io.tb.br.ka.TopicProvisioner] (x) started",
                "10:00:01.250" + GREW, "10:00:03.750" + DONE));
        Files.write(dir.resolve("tbmq-broker-1-5e6f7a8b.log"), List.of("10:00:02.000" + GREW, "10:00:12.000" + LET_GO, "10:00:12.001" + DONE));
        Files.write(dir.resolve("tbmq-redis-0-00000000.log"), List.of("10:00:01.000" + GREW));

        assertThat(PartitionMoves.report(dir, "tbmq-broker-")).containsExactly(
                org.assertj.core.api.Assertions.entry("tbmq.msg.all move, tbmq-broker-0-1a2b3c4d (12 -> 16)",
                        "12 -> 16 at 10:00:01.250, every topic on its new partition 2.5 s later, in order"),
                org.assertj.core.api.Assertions.entry("tbmq.msg.all move, tbmq-broker-1-5e6f7a8b (12 -> 16)",
                        "12 -> 16 at 10:00:02, every topic on its new partition 10.0 s later, bounded: 40 messages went on at 10000 ms, "
                                + "the longest wait"),
                org.assertj.core.api.Assertions.entry("tbmq.msg.all move to 16 partitions, brokers apart", "0.8 s (2 brokers)"));
    }

    @Test
    void aBrokerThatJoinedAMoveAsItStartedIsReportedSoAndNotCountedInHowFarApartTheBrokersMoved(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("tbmq-broker-0-1a2b3c4d.log"), List.of("10:00:01.250" + GREW, "10:00:03.750" + DONE));
        Files.write(dir.resolve("tbmq-broker-1-5e6f7a8b.log"), List.of("10:00:02.900" + GREW.replace("16 partitions: ",
                "16 partitions (joining the move of tbmq-broker-0, under way as this node started): "), "10:00:05.400" + DONE));

        assertThat(PartitionMoves.report(dir, "tbmq-broker-")).containsExactly(
                org.assertj.core.api.Assertions.entry("tbmq.msg.all move, tbmq-broker-0-1a2b3c4d (12 -> 16)",
                        "12 -> 16 at 10:00:01.250, every topic on its new partition 2.5 s later, in order"),
                org.assertj.core.api.Assertions.entry("tbmq.msg.all move, tbmq-broker-1-5e6f7a8b (12 -> 16)",
                        "12 -> 16 at 10:00:02.900, joined tbmq-broker-0's move as it started, every topic on its new partition 2.5 s "
                                + "later, in order"));
    }

    @Test
    void saysSoWhenNoBrokerMoved(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("tbmq-broker-0-1a2b3c4d.log"), List.of("10:00:00.000 INFO  [io.tb.br.ka.TopicProvisioner] (x) started"));
        assertThat(PartitionMoves.report(dir, "tbmq-broker-")).containsEntry("tbmq.msg.all moves", "none in the brokers' logs");
    }
}
