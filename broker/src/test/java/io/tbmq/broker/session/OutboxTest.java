package io.tbmq.broker.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.testing.TestSink;

/** The queue and the in-flight window of one session, without a connection or a store. */
class OutboxTest {
    final List<String> drops = new ArrayList<>();
    final List<String> settled = new ArrayList<>();
    final Outbox outbox = new Outbox("c1", 3, (client, reason) -> drops.add(reason), new Outbox.Settled() {
        @Override
        public void acknowledged(int packetId, long score) {
            settled.add("acknowledged " + packetId + "@" + score);
        }

        @Override
        public void released(int packetId, long score) {
            settled.add("released " + packetId + "@" + score);
        }
    });
    final Wire wire = new Wire(2);

    @Test
    void theWindowBoundsWhatIsInFlightAndAnAckMakesRoom() {
        outbox.add(live(1, "a"));
        outbox.add(live(1, "b"));
        outbox.add(live(1, "c"));
        assertThat(outbox.drainTo(wire, 0)).isTrue();
        assertThat(wire.sent).containsExactly("a#1", "b#2");
        assertThat(outbox.drainTo(wire, 0)).as("window full").isFalse();

        assertThat(outbox.pubAck(1)).isTrue();
        assertThat(outbox.pubAck(1)).as("only once").isFalse();
        outbox.drainTo(wire, 0);
        assertThat(wire.sent).containsExactly("a#1", "b#2", "c#3");
        assertThat(outbox.inFlightCount()).isEqualTo(2);
        assertThat(settled).as("nothing stored").isEmpty();
    }

    @Test
    void aFullQueueDropsItsOldestQos0FirstThenRefuses() {
        outbox.add(live(0, "q0"));
        outbox.add(live(1, "a"));
        outbox.add(live(1, "b"));
        assertThat(outbox.add(live(1, "c"))).isTrue();
        assertThat(outbox.add(live(1, "d"))).isFalse();
        assertThat(drops).containsExactly("queue-full", "queue-full");
        assertThat(outbox.queuedCount()).isEqualTo(3);
    }

    @Test
    void anExpiredMessageIsDeletedNotSent() {
        outbox.add(new OutboundMessage(new PublishMessage("t", 1, false, "old".getBytes(), MessageProperties.NONE, "p", 0, 1_000), 1,
                false, new int[0]));
        outbox.add(live(1, "new"));
        outbox.drainTo(wire, 2_000);
        assertThat(wire.sent).containsExactly("new#1");
        assertThat(drops).containsExactly("expired");
    }

    @Test
    void storedMessagesKeepTheirStoresPacketIdsAndSettleThere() {
        outbox.add(stored(7, 70, 2));
        outbox.add(stored(8, 80, 1));
        outbox.drainTo(wire, 0);
        assertThat(wire.sent).containsExactly("s70#7", "s80#8");
        assertThat(outbox.sentScore()).isEqualTo(80);

        assertThat(outbox.pubRec(7, 0)).isEqualTo(Outbox.Pubrec.PUBREL);
        assertThat(outbox.pubComp(7)).isTrue();
        assertThat(outbox.pubAck(8)).isTrue();
        assertThat(settled).containsExactly("released 7@70", "acknowledged 7@70", "acknowledged 8@80");
    }

    @Test
    void anErrorPubrecEndsTheFlowAndFreesTheId() {
        outbox.add(stored(5, 50, 2));
        outbox.drainTo(wire, 0);
        assertThat(outbox.pubRec(5, 0x80)).isEqualTo(Outbox.Pubrec.ENDED);
        assertThat(outbox.pubComp(5)).as("no PUBCOMP owed").isFalse();
        assertThat(outbox.pubRec(5, 0)).isEqualTo(Outbox.Pubrec.UNKNOWN);
        assertThat(settled).containsExactly("acknowledged 5@50");
        assertThat(outbox.inFlightCount()).isZero();
    }

    @Test
    void aMessageTooLargeForTheClientIsSettledSoItsStoreForgetsIt() {
        wire.refuse = "big";
        outbox.add(new OutboundMessage(new PublishMessage("t", 1, false, "big".getBytes(), MessageProperties.NONE, "p", 0, 0), 1, false,
                new int[0], 9, 90, false));
        outbox.drainTo(wire, 0);
        assertThat(settled).containsExactly("acknowledged 9@90");
        assertThat(outbox.inFlightCount()).isZero();
    }

    @Test
    void theStoresContentReplacesWhatMemoryHeldOfIt() {
        outbox.add(live(1, "memory-only"));
        outbox.add(stored(3, 30, 1));
        outbox.restore(new int[] {4}, List.of(stored(1, 10, 1), stored(2, 20, 1)));
        assertThat(outbox.inFlight()).singleElement().satisfies(e -> {
            assertThat(e.packetId).isEqualTo(4);
            assertThat(e.released).as("owes a PUBREL").isTrue();
        });
        assertThat(outbox.queue()).extracting(m -> new String(m.message().payload())).containsExactly("s10", "s20", "memory-only");
    }

    private static OutboundMessage live(int qos, String payload) {
        return OutboundMessage.of(new PublishMessage("t", qos, false, payload.getBytes(), MessageProperties.NONE, "p", 0, 0), qos, false);
    }

    private static OutboundMessage stored(int packetId, long score, int qos) {
        PublishMessage m = new PublishMessage("t", qos, false, ("s" + score).getBytes(), MessageProperties.NONE, "p", 0, 0);
        return new OutboundMessage(m, qos, false, new int[0], packetId, score, false);
    }

    static final class Wire extends TestSink {
        final List<String> sent = new ArrayList<>();
        String refuse;

        Wire(int window) {
            super(window);
        }

        @Override
        public boolean writePublish(OutboundMessage message, int packetId, boolean dup) {
            String payload = new String(message.message().payload());
            if (payload.equals(refuse)) {
                return false;
            }
            sent.add(payload + "#" + packetId);
            return true;
        }
    }
}
