package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Where an APPLICATION client's commit may go, as its session hands records out and the client acknowledges them. */
class AcknowledgedOffsetsTest {

    @Test
    void theCommitWaitsAtTheLowestUnacknowledgedOffset() {
        AcknowledgedOffsets offsets = new AcknowledgedOffsets(10);
        offsets.read(10, true);
        offsets.read(11, false);
        offsets.read(12, true);
        assertThat(offsets.commitOffset()).isEqualTo(10);
        offsets.acknowledged(12);
        assertThat(offsets.commitOffset()).isEqualTo(10);
        offsets.acknowledged(10);
        assertThat(offsets.commitOffset()).isEqualTo(13);
    }

    @Test
    void anAcknowledgementThatCameBeforeItsRecordWasReadAgainStillCounts() {
        // A resumed session wrote 10 and 11 again before its new consumer read them; the client acked both.
        AcknowledgedOffsets offsets = new AcknowledgedOffsets(10);
        offsets.acknowledged(10);
        offsets.acknowledged(11);
        offsets.read(10, true);
        offsets.read(11, true);
        offsets.read(12, true);
        assertThat(offsets.commitOffset()).as("only 12 is outstanding").isEqualTo(12);
        offsets.acknowledged(12);
        assertThat(offsets.commitOffset()).isEqualTo(13);
    }

    @Test
    void anAcknowledgementOfAnOffsetAlreadyCommittedChangesNothing() {
        AcknowledgedOffsets offsets = new AcknowledgedOffsets(10);
        offsets.acknowledged(3);
        offsets.read(10, true);
        assertThat(offsets.commitOffset()).isEqualTo(10);
    }

    @Test
    void aConsumerResetToTheEarliestOffsetKeepsCountingAcknowledgementsOfWhatItReadBefore() {
        AcknowledgedOffsets offsets = new AcknowledgedOffsets(10);
        offsets.read(10, true);
        offsets.read(11, true);
        offsets.read(0, true);
        offsets.acknowledged(11);
        offsets.acknowledged(10);
        offsets.acknowledged(0);
        assertThat(offsets.commitOffset()).isEqualTo(12);
    }

    @Test
    void recordsRetentionRemovedAreSkipped() {
        AcknowledgedOffsets offsets = new AcknowledgedOffsets(10);
        offsets.read(25, false);
        assertThat(offsets.commitOffset()).isEqualTo(26);
    }
}
