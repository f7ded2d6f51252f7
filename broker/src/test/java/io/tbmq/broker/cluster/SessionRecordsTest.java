package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.DownlinkRecord;
import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.record.Will;
import io.tbmq.broker.record.WillCodec;

/** What nodes tell each other through Kafka survives the trip. */
class SessionRecordsTest {

    @Test
    void aSessionRecordKeepsEverythingAnotherNodeNeeds() {
        Will will = new Will("c1", "status/c1", 1, true, "gone".getBytes(), MessageProperties.NONE, 30, 5);
        SessionState s = new SessionState("c1", 7, Persistence.APPLICATION, 600, 0,
                List.of(new SessionState.Sub("$share/g/a/+", new SubscriptionOptions(2, true, true, 1, 9))), "node-b", true, 12,
                WillCodec.encode(will), List.of("secret/#"));
        SessionState back = SessionState.decode("c1", s.encode(), "ignored");
        assertThat(back).usingRecursiveComparison().ignoringFields("will").isEqualTo(s);
        Will w = WillCodec.decode(back.will());
        assertThat(w.topic()).isEqualTo("status/c1");
        assertThat(new String(w.payload())).isEqualTo("gone");
        assertThat(w.delaySeconds()).isEqualTo(5);
        assertThat(w.messageExpirySeconds()).isEqualTo(30);
        assertThat(w.retain()).isTrue();
    }

    @Test
    void adoptionMakesTheRecordNewerAndDisconnected() {
        SessionState s = new SessionState("c1", 7, Persistence.DEVICE, 600, 0, List.of(), "node-b", true, 3, new byte[] {1},
                List.of());
        SessionState adopted = s.adoptedBy("node-a", 1000);
        assertThat(adopted.node()).isEqualTo("node-a");
        assertThat(adopted.connected()).isFalse();
        assertThat(adopted.disconnectedAtMillis()).isEqualTo(1000);
        assertThat(adopted.will()).as("published by the adopter, not again by the next one").isNull();
        assertThat(adopted.supersedes(s.version(), s.node())).isTrue();
    }

    @Test
    void garbageIsRefusedWithAClearError() {
        assertThatThrownBy(() -> SessionState.decode("c1", new byte[] {2, 0, 1}, "n")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SessionState.decode("c1", new byte[] {9}, "n")).hasMessageContaining("version");
        assertThatThrownBy(() -> DownlinkRecord.decode(new byte[] {1, 2})).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCorruptCountIsRefusedNotAllocated() {
        SessionState s = new SessionState("c1", 7, Persistence.DEVICE, 600, 0, List.of(), "node-b", true, 3, new byte[] {1},
                List.of());
        // The subscription count follows version, epoch, persistence, expiry and disconnection time: claim 2^31-1.
        byte[] corrupt = s.encode();
        java.nio.ByteBuffer.wrap(corrupt).putInt(26, Integer.MAX_VALUE);
        assertThatThrownBy(() -> SessionState.decode("c1", corrupt, "n")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(Integer.MAX_VALUE + " entries");
    }

    @Test
    void aDownlinkRecordCarriesTheStoreAssignedIdsAndCountsHops() {
        var message = new io.tbmq.broker.record.PublishMessage("cmd/x", 1, false, "on".getBytes(), MessageProperties.NONE, "p", 1,
                0);
        DownlinkRecord r = new DownlinkRecord(99, 0, 65535, 70000, io.tbmq.broker.record.StoredMessage.encode(
                new OutboundMessage(message, 1, false, new int[] {4})));
        DownlinkRecord back = DownlinkRecord.decode(r.forwarded().encode());
        assertThat(back.epoch()).isEqualTo(99);
        assertThat(back.hops()).isEqualTo(1);
        assertThat(back.stored()).isTrue();
        OutboundMessage out = back.outbound();
        assertThat(out.packetId()).isEqualTo(65535);
        assertThat(out.score()).isEqualTo(70000);
        assertThat(out.subscriptionIds()).containsExactly(4);
        assertThat(new String(out.message().payload())).isEqualTo("on");
    }

    @Test
    void nodesAreAliveUntilSilentForTheTimeoutAndGoneAtOnceWhenTheyLeave() throws Exception {
        NodeLiveness liveness = new NodeLiveness("node-b", java.time.Duration.ofMillis(300));
        liveness.record("node-a".getBytes(), "1".getBytes());
        liveness.record("node-c".getBytes(), "1".getBytes());
        assertThat(liveness.aliveNodes()).containsExactly("node-a", "node-b", "node-c");
        assertThat(liveness.isCaretaker()).isFalse();
        liveness.record("node-a".getBytes(), null);
        assertThat(liveness.alive("node-a")).as("left after draining").isFalse();
        assertThat(liveness.isCaretaker()).as("lowest live id").isTrue();
        Thread.sleep(400);
        assertThat(liveness.alive("node-c")).as("silent past the timeout").isFalse();
        assertThat(liveness.alive("node-b")).as("itself").isTrue();
    }

    @Test
    void aNodeWhoseOwnHeartbeatsLagDoesNotJudgeTheOthers() throws Exception {
        NodeLiveness liveness = new NodeLiveness("node-b", java.time.Duration.ofMillis(400));
        assertThat(liveness.viewIsCurrent()).as("nothing read back yet").isFalse();
        liveness.record("node-b".getBytes(), "1".getBytes());
        assertThat(liveness.viewIsCurrent()).isTrue();
        Thread.sleep(250);
        assertThat(liveness.viewIsCurrent()).as("own heartbeat not seen for half the timeout").isFalse();
    }
}
