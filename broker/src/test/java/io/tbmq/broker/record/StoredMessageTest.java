package io.tbmq.broker.record;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;


/** A copy routed again after a node crashed keeps its DUP through every store and topic it passes. */
class StoredMessageTest {
    private static final PublishMessage MESSAGE = new PublishMessage("cmd/x", 1, true, "on".getBytes(), MessageProperties.NONE,
            "p", 1, 0);

    @Test
    void aCopyMarkedAsPossiblySentBeforeDecodesAsDupWithItsRetainFlag() {
        byte[] value = StoredMessage.encode(new OutboundMessage(MESSAGE, 1, true, new int[] {7}, 0, 0, true));
        OutboundMessage back = StoredMessage.decode(value, 12, 34, false);
        assertThat(back.dup()).isTrue();
        assertThat(back.retain()).isTrue();
        assertThat(back.subscriptionIds()).containsExactly(7);
        assertThat(back.packetId()).isEqualTo(12);
    }

    @Test
    void aFirstCopyIsDupOnlyWhenItsStoreSaysItWasSent() {
        byte[] value = StoredMessage.encode(new OutboundMessage(MESSAGE, 1, false, new int[0]));
        assertThat(StoredMessage.decode(value, 1, 1, false).dup()).isFalse();
        assertThat(StoredMessage.decode(value, 1, 1, false).retain()).isFalse();
        assertThat(StoredMessage.decode(value, 1, 1, true).dup()).isTrue();
    }

    @Test
    void aCopyForMoreThan255MatchingSubscriptionsKeepsEveryIdentifier() {
        int[] ids = java.util.stream.IntStream.rangeClosed(1, 300).toArray();
        byte[] value = StoredMessage.encode(new OutboundMessage(MESSAGE, 1, true, ids, 0, 0, true));
        OutboundMessage back = StoredMessage.decode(value, 5, 6, false);
        assertThat(back.subscriptionIds()).containsExactly(ids);
        assertThat(back.message().topic()).isEqualTo("cmd/x");
        assertThat(back.message().payload()).isEqualTo("on".getBytes());
        assertThat(back.dup()).isTrue();
        assertThat(back.retain()).isTrue();
    }

    @Test
    void aCopyWithFewIdentifiersKeepsTheFormatEarlierVersionsRead() {
        int[] ids = java.util.stream.IntStream.rangeClosed(1, 255).toArray();
        byte[] value = StoredMessage.encode(new OutboundMessage(MESSAGE, 1, false, ids));
        assertThat(value[0]).isEqualTo((byte) 1);
        assertThat(value[3]).isEqualTo((byte) 255);
        assertThat(StoredMessage.decode(value, 1, 1, false).subscriptionIds()).containsExactly(ids);
    }

    @Test
    void valuesWrittenBeforeTheFlagsByteKeepTheirMeaning() {
        // Redis and Kafka hold values of earlier versions: byte 2 was 1 for RETAIN, else 0.
        byte[] value = StoredMessage.encode(new OutboundMessage(MESSAGE, 1, true, new int[0]));
        assertThat(value[2]).isEqualTo((byte) 1);
        assertThat(StoredMessage.decode(value, 1, 1, false).dup()).isFalse();
    }
}
