package io.tbmq.broker.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.testing.TestSink;

/**
 * Delivery of messages a persistent store assigned (packet id and score): in score order, never
 * twice, and a gap in a DEVICE session's scores is filled from the store before anything later goes.
 */
class StoredDeliveryTest {
    private final List<Integer> written = new ArrayList<>();
    private final List<Boolean> dups = new ArrayList<>();
    private int missed;
    private int rechecked;
    private Session session;
    private final DeliverySink sink = new TestSink() {

        @Override
        public void scheduleDrain() {
            session.drain(this);
        }

        @Override
        public boolean writePublish(OutboundMessage message, int packetId, boolean dup) {
            written.add((int) message.score());
            dups.add(dup);
            return true;
        }
    };

    @BeforeEach
    void connect() {
        session = new Session("dev", 600, 100, false, (c, r) -> { });
        session.persistence(Persistence.DEVICE);
        session.store(new SessionStore() {
            @Override
            public CompletableFuture<Void> prepare(Session s) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public boolean attach(Session s, DeliverySink target) {
                return s.resume(target);
            }

            @Override
            public void detach(Session s, DeliverySink target) {
            }

            @Override
            public void acknowledged(Session s, int packetId, long score) {
            }

            @Override
            public void released(Session s, int packetId, long score) {
            }

            @Override
            public boolean fillsGaps() {
                return true;
            }

            @Override
            public void missed(Session s) {
                missed++;
            }

            @Override
            public void recheck(Session s) {
                rechecked++;
            }

            @Override
            public CompletableFuture<Void> ended(Session s) {
                return CompletableFuture.completedFuture(null);
            }
        });
        session.claim(sink);
        session.resume(sink);
    }

    private static OutboundMessage stored(long score) {
        PublishMessage m = new PublishMessage("t", 1, false, new byte[0], MessageProperties.NONE, "p", 0, 0);
        return new OutboundMessage(m, 1, false, new int[0], (int) score, score, false);
    }

    @Test
    void consecutiveScoresGoOutInOrderAndRepeatsAreIgnored() {
        session.offer(stored(1));
        session.offer(stored(2));
        session.offer(stored(2));
        session.offer(stored(1));
        session.offer(stored(3));
        assertThat(written).containsExactly(1, 2, 3);
        assertThat(missed).isZero();
    }

    @Test
    void aGapHoldsLaterMessagesUntilTheStoreFillsIt() {
        session.offer(stored(1));
        session.offer(stored(3));
        session.offer(stored(4));
        assertThat(written).as("3 and 4 wait for 2").containsExactly(1);
        assertThat(missed).isEqualTo(1);
        assertThat(session.catchingUp()).isTrue();

        // The store has 2 and 3 (4 was written after the load read it).
        session.catchUp(List.of(stored(2), stored(3)), 3);
        assertThat(written).containsExactly(1, 2, 3, 4);
        assertThat(dups).containsOnly(false);
        assertThat(session.catchingUp()).isFalse();
    }

    @Test
    void anotherNodesEarlierMessageArrivingLateFillsTheGapWithoutTheStore() {
        // Every node's router writes this client's messages: 3 came straight from this node's
        // router, 2 from another node's through the downlink topic, a little later.
        session.offer(stored(1));
        session.offer(stored(3));
        assertThat(written).containsExactly(1);
        session.offer(stored(2));
        assertThat(written).containsExactly(1, 2, 3);
        assertThat(session.catchingUp()).isFalse();
        assertThat(session.requestFill()).as("no load of the store is needed any more").isFalse();
        session.offer(stored(4));
        assertThat(written).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aMessageWrittenAfterTheLoadAndStillOnItsWayIsWaitedFor() {
        session.offer(stored(1));
        session.offer(stored(4));
        assertThat(session.requestFill()).isTrue();
        // The load read the store when it held 2; 3 was written after it and is still on its way.
        session.catchUp(List.of(stored(2)), 2);
        assertThat(written).containsExactly(1, 2);
        assertThat(missed).as("asked again for what is still missing").isEqualTo(2);
        assertThat(session.catchingUp()).isTrue();
        session.offer(stored(3));
        assertThat(written).containsExactly(1, 2, 3, 4);
        assertThat(session.catchingUp()).isFalse();
        assertThat(session.requestFill()).as("so the second load is not needed").isFalse();
        assertThat(session.catchUp(List.of(stored(3), stored(4)), 4)).isZero();
        assertThat(written).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aMessagePastAGapAfterAReconnectLoadIsHeldUntilTheGapFills() {
        session.beginLoading(sink);
        session.offer(stored(5));
        session.restore(sink, new int[0], List.of(stored(2), stored(3)), 3);
        session.drain(sink);
        assertThat(written).as("4 was written after the load and is on its way").containsExactly(2, 3);
        session.fillGapAfterRestore();
        assertThat(missed).isEqualTo(1);
        session.offer(stored(4));
        assertThat(written).containsExactly(2, 3, 4, 5);
    }

    @Test
    void aReconnectLoadTakesOverFromACatchUp() {
        session.offer(stored(1));
        session.offer(stored(3));
        session.beginLoading(sink);
        session.catchUp(List.of(stored(2), stored(3)), 3);
        assertThat(written).as("the reconnect's restore decides, not the catch-up").containsExactly(1);
        session.restore(sink, new int[0], List.of(stored(2), stored(3)), 3);
        session.drain(sink);
        assertThat(written).containsExactly(1, 2, 3);
    }

    @Test
    void aRecheckAfterAReconnectSendsWhatTheStoreKeptWithoutSending() {
        session.offer(stored(1));
        // Another node stored 2 and 3 while it still took the client for offline: nothing pushed them here.
        session.recheckStore(sink);
        assertThat(rechecked).isEqualTo(1);
        assertThat(session.catchUp(List.of(stored(2), stored(3)), 3)).isEqualTo(2);
        session.offer(stored(4));
        assertThat(written).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aRecheckForAConnectionThatIsGoneDoesNothing() {
        session.detach(sink);
        session.recheckStore(sink);
        assertThat(rechecked).isZero();
    }

    @Test
    void afterARestoreTheStoresLastScoreIsTheBaseline() {
        session.beginLoading(sink);
        session.restore(sink, new int[0], List.of(), 41);
        session.offer(stored(42));
        assertThat(written).containsExactly(42);
        assertThat(missed).isZero();
    }

    @Test
    void applicationOffsetsMayJump() {
        session.persistence(Persistence.APPLICATION);
        session.offer(stored(5));
        session.offer(stored(9));
        assertThat(written).containsExactly(5, 9);
        assertThat(missed).isZero();
    }
}
