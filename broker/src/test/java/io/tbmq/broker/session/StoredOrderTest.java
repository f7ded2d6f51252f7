package io.tbmq.broker.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.session.StoredOrder.Arrival;

/** Stored messages reach the queue in their store's order, whatever order they arrive in. */
class StoredOrderTest {
    final ArrayDeque<OutboundMessage> queue = new ArrayDeque<>();
    final StoredOrder order = new StoredOrder(queue);

    @Test
    void consecutiveScoresAreQueuedAndRepeatsIgnored() {
        assertThat(order.arrived(stored(1), true, true)).isEqualTo(Arrival.QUEUED);
        assertThat(order.arrived(stored(2), true, true)).isEqualTo(Arrival.QUEUED);
        assertThat(order.arrived(stored(2), true, true)).isEqualTo(Arrival.IGNORED);
        assertThat(order.arrived(stored(1), true, true)).isEqualTo(Arrival.IGNORED);
        assertThat(scores()).containsExactly(1L, 2L);
    }

    @Test
    void aMessagePastAGapIsHeldUntilTheGapFillsThenAllFollowInOrder() {
        order.arrived(stored(1), true, true);
        assertThat(order.arrived(stored(3), true, true)).as("opens a gap").isEqualTo(Arrival.GAP);
        assertThat(order.arrived(stored(4), true, true)).isEqualTo(Arrival.HELD);
        assertThat(order.gapOpen()).isTrue();
        assertThat(order.arrived(stored(2), true, true)).as("fills it").isEqualTo(Arrival.RELEASED);
        assertThat(scores()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(order.catchingUp()).as("nothing held any more").isFalse();
        assertThat(order.requestFill()).as("no load needed").isFalse();
    }

    @Test
    void whileOfflineTheStoreKeepsEverything() {
        assertThat(order.arrived(stored(1), false, true)).isEqualTo(Arrival.IGNORED);
        assertThat(queue).isEmpty();
    }

    @Test
    void withoutConsecutiveScoresNothingIsHeld() {
        // APPLICATION scores are Kafka offsets: they have gaps, and the topic is read in order anyway.
        order.arrived(stored(10), true, false);
        assertThat(order.arrived(stored(14), true, false)).isEqualTo(Arrival.QUEUED);
        assertThat(scores()).containsExactly(10L, 14L);
    }

    @Test
    void aGapTheStoreFillsIsQueuedBeforeWhatWasHeld() {
        order.arrived(stored(1), true, true);
        order.arrived(stored(4), true, true);
        assertThat(order.requestFill()).isTrue();
        // The store has 2, 3 and 4: the held copy of 4 is not queued twice.
        assertThat(order.caughtUp(List.of(stored(2), stored(3), stored(4)), 4)).isEqualTo(3);
        assertThat(scores()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(order.catchingUp()).isFalse();
        assertThat(order.caughtUp(List.of(stored(5)), 5)).as("no catch-up awaited").isEqualTo(-1);
    }

    @Test
    void aGapLeftAfterALoadKeepsHolding() {
        order.arrived(stored(1), true, true);
        order.arrived(stored(5), true, true);
        order.requestFill();
        // The store knows 2 only so far; 3 and 4 are still on their way.
        order.caughtUp(List.of(stored(2)), 2);
        assertThat(scores()).containsExactly(1L, 2L);
        assertThat(order.catchingUp()).isTrue();
        assertThat(order.requestFill()).isTrue();
    }

    @Test
    void whatArrivesWhileAReconnectLoadsFollowsTheStoresMessages() {
        order.beginLoading();
        assertThat(order.arrived(stored(3), true, true)).isEqualTo(Arrival.HELD);
        assertThat(order.arrived(stored(4), true, true)).isEqualTo(Arrival.HELD);
        assertThat(order.requestFill()).as("the reconnect's load takes it").isFalse();
        List<OutboundMessage> stored = List.of(stored(1), stored(2), stored(3));
        queue.addAll(stored);
        assertThat(order.loaded(stored, 3)).isTrue();
        assertThat(scores()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(order.gapOpen()).isFalse();
    }

    @Test
    void aGapBehindAReconnectsLoadIsLeftOpenForTheStore() {
        order.beginLoading();
        order.arrived(stored(6), true, true);
        List<OutboundMessage> stored = List.of(stored(1), stored(2));
        queue.addAll(stored);
        assertThat(order.loaded(stored, 2)).isFalse();
        assertThat(scores()).containsExactly(1L, 2L);
        assertThat(order.gapOpen()).isTrue();
    }

    @Test
    void aRecheckHoldsArrivalsUntilTheStoreAnswers() {
        order.arrived(stored(1), true, true);
        assertThat(order.startRecheck()).isTrue();
        assertThat(order.startRecheck()).as("one at a time").isFalse();
        assertThat(order.arrived(stored(2), true, true)).as("a consecutive one still goes straight on").isEqualTo(Arrival.RELEASED);
        assertThat(order.caughtUp(List.of(stored(2), stored(3)), 3)).isEqualTo(1);
        assertThat(scores()).containsExactly(1L, 2L, 3L);
        assertThat(order.catchingUp()).isFalse();
    }

    private List<Long> scores() {
        return queue.stream().map(OutboundMessage::score).toList();
    }

    private static OutboundMessage stored(long score) {
        PublishMessage m = new PublishMessage("t", 1, false, new byte[0], MessageProperties.NONE, "p", 0, 0);
        return new OutboundMessage(m, 1, false, new int[0], (int) score, score, false);
    }
}
