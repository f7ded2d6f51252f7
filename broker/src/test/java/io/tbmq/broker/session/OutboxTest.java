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
        assertThat(outbox.resendOnResume()).as("owes a PUBREL").containsExactly(4);
        assertThat(outbox.inFlightCount()).isEqualTo(1);
        assertThat(outbox.queue()).extracting(m -> new String(m.message().payload())).containsExactly("s10", "s20", "memory-only");
    }

    @Test
    void aResumedConnectionGetsWhatWasInFlightAgainWithDupAndItsIdsButOnlyAsItsOwnWindowAllows() {
        // [MQTT-4.4.0-1], and the send quota starts again at each connection's Receive Maximum [MQTT-3.3.4-9].
        Wire wide = new Wire(3);
        for (String p : List.of("a", "b", "c")) {
            outbox.add(live(1, p));
        }
        outbox.drainTo(wide, 0);
        outbox.add(live(1, "d"));
        assertThat(outbox.pubRec(1, 0)).as("not QoS 2").isEqualTo(Outbox.Pubrec.UNKNOWN);
        assertThat(outbox.resendOnResume()).as("no PUBREL owed").isEmpty();

        Wire narrow = new Wire(1);
        outbox.drainTo(narrow, 0);
        assertThat(narrow.sent).containsExactly("a#1 DUP");
        outbox.pubAck(1);
        outbox.drainTo(narrow, 0);
        outbox.pubAck(2);
        outbox.drainTo(narrow, 0);
        outbox.pubAck(3);
        outbox.drainTo(narrow, 0);
        assertThat(narrow.sent).containsExactly("a#1 DUP", "b#2 DUP", "c#3 DUP", "d#4");
    }

    @Test
    void aMessageTooLargeForTheResumedConnectionNoLongerHoldsItsWindow() {
        // [MQTT-3.1.2-25]: dropped as if delivered, so the messages behind it go on.
        outbox.add(live(1, "big"));
        outbox.add(live(1, "small"));
        outbox.drainTo(wire, 0);
        outbox.resendOnResume();

        Wire limited = new Wire(1);
        limited.refuse = "big";
        outbox.drainTo(limited, 0);
        assertThat(limited.sent).containsExactly("small#2 DUP");
        assertThat(outbox.inFlightCount()).isEqualTo(1);
    }

    @Test
    void aMessageSentBeforeIsSentAgainEvenIfItHasExpiredMeanwhile() {
        // Only a copy whose onward delivery has not started is deleted at expiry [MQTT-3.3.2-5].
        outbox.add(new OutboundMessage(new PublishMessage("t", 1, false, "started".getBytes(), MessageProperties.NONE, "p", 0, 1_000), 1,
                false, new int[0]));
        outbox.drainTo(wire, 0);
        outbox.resendOnResume();
        Wire again = new Wire(2);
        outbox.drainTo(again, 2_000);
        assertThat(again.sent).containsExactly("started#1 DUP");
        assertThat(drops).isEmpty();
    }

    @Test
    void aMessageTheStoreOnlyMayHaveSentIsStillDeletedAtItsExpiry() {
        // A store sets DUP on what it may have sent (an APPLICATION backlog read again after a restart).
        outbox.add(new OutboundMessage(new PublishMessage("t", 1, false, "backlog".getBytes(), MessageProperties.NONE, "p", 0, 1_000), 1,
                false, new int[0], 0, 10, true));
        outbox.drainTo(wire, 2_000);
        assertThat(wire.sent).isEmpty();
        assertThat(drops).containsExactly("expired");
    }

    @Test
    void aReconnectsLoadKeepsThePubrelsOwedShouldItFail() {
        outbox.add(stored(7, 70, 2));
        outbox.add(stored(8, 80, 2));
        outbox.drainTo(wire, 0);
        outbox.pubRec(7, 0);
        outbox.dropStored();
        assertThat(outbox.resendOnResume()).as("PUBREL 7 still owed").containsExactly(7);
        assertThat(outbox.inFlightCount()).isEqualTo(1);
        assertThat(outbox.queuedCount()).as("the store sends 8 again once it answers").isZero();
    }

    @Test
    void aReconnectsLoadKeepsInFlightWhatOnlyMemoryHasSoItIsSentAgain() {
        // A retained copy sent on subscribe is in no store: the store's content must not wipe it out.
        outbox.add(live(1, "retained"));
        outbox.add(stored(5, 50, 2));
        outbox.drainTo(wire, 0);
        outbox.dropStored();
        outbox.restore(new int[] {5}, List.of());
        assertThat(outbox.resendOnResume()).containsExactly(5);
        Wire again = new Wire(2);
        outbox.drainTo(again, 0);
        assertThat(again.sent).containsExactly("retained#1 DUP");
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
            sent.add(payload + "#" + packetId + (dup ? " DUP" : ""));
            return true;
        }
    }
}
