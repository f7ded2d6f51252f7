package io.tbmq.broker.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

class PublishMessageCodecTest {

    @Test
    void roundTripsEveryField() {
        PublishMessage m = new PublishMessage("europe/ua/kyiv/1/x", 2, true, "payload".getBytes(StandardCharsets.UTF_8),
                new MessageProperties(1, "application/json", "reply/to", new byte[] {9, 8},
                        List.of(new UserProperty("k", "v"), new UserProperty("k", "w"))),
                "publisher-1", 1_700_000_000_000_000L, 1_700_000_100_000L);
        assertThat(PublishMessageCodec.decode(PublishMessageCodec.encode(m))).usingRecursiveComparison().isEqualTo(m);
    }

    @Test
    void aSmallP2PMessageStaysSmall() {
        PublishMessage m = new PublishMessage("europe/ua/kyiv/123/x", 1, false, new byte[62], MessageProperties.NONE,
                "pub-123", 1L, 0L);
        byte[] encoded = PublishMessageCodec.encode(m);
        assertThat(encoded.length).isLessThanOrEqualTo(62 + 20 + 7 + 30);
        assertThat(PublishMessageCodec.decode(encoded).properties()).isEqualTo(MessageProperties.NONE);
    }

    @Test
    void truncatedOrForeignRecordsAreRejected() {
        byte[] encoded = PublishMessageCodec.encode(new PublishMessage("t", 0, false, new byte[10], MessageProperties.NONE, "p", 1, 0));
        assertThatThrownBy(() -> PublishMessageCodec.decode(Arrays.copyOf(encoded, encoded.length - 3)))
                .isInstanceOf(IllegalArgumentException.class);
        byte[] other = encoded.clone();
        other[0] = 9;
        assertThatThrownBy(() -> PublishMessageCodec.decode(other)).hasMessageContaining("version");
    }

    @Test
    void aCorruptLengthIsRefusedNotAllocated() {
        byte[] encoded = PublishMessageCodec.encode(new PublishMessage("t", 0, false, new byte[10], MessageProperties.NONE, "p", 1, 0));
        // The payload's length sits right before its 10 bytes: claim 2 GB.
        byte[] hugePayload = encoded.clone();
        java.nio.ByteBuffer.wrap(hugePayload).putInt(encoded.length - 14, Integer.MAX_VALUE);
        assertThatThrownBy(() -> PublishMessageCodec.decode(hugePayload)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("length of " + Integer.MAX_VALUE);
        // The publisher's length (after version, flags and two timestamps): past the record's end.
        byte[] longPublisher = encoded.clone();
        java.nio.ByteBuffer.wrap(longPublisher).putShort(18, (short) 0xFFFF);
        assertThatThrownBy(() -> PublishMessageCodec.decode(longPublisher)).isInstanceOf(IllegalArgumentException.class);
    }
}
