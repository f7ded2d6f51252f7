package io.tbmq.broker.retain;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.MessageProperties;
import io.tbmq.broker.record.PublishMessage;
import io.tbmq.broker.topic.Topics;

class RetainedStoreTest {
    private static PublishMessage msg(String topic, String payload, long expiresAt) {
        return new PublishMessage(topic, 1, true, payload.getBytes(), MessageProperties.NONE, "p", 0, expiresAt);
    }

    private static java.util.List<String> topics(RetainedStore store, String filter) {
        return store.match(Topics.parseFilter(filter, 32)).stream().map(PublishMessage::topic).sorted().toList();
    }

    @Test
    void findsRetainedMessagesByFilter() {
        RetainedStore store = new RetainedStore(100);
        for (String t : new String[] {"a", "a/b", "a/b/c", "a/c", "$SYS/x", "b"}) {
            store.put(msg(t, "v", 0));
        }
        assertThat(topics(store, "a/#")).containsExactly("a", "a/b", "a/b/c", "a/c");
        assertThat(topics(store, "a/+")).containsExactly("a/b", "a/c");
        assertThat(topics(store, "#")).doesNotContain("$SYS/x").hasSize(5);
        assertThat(topics(store, "$SYS/#")).containsExactly("$SYS/x");
        assertThat(topics(store, "+/b")).containsExactly("a/b");
    }

    @Test
    void emptyPayloadClearsAndTheLimitRefusesNewTopicsOnly() {
        RetainedStore store = new RetainedStore(2);
        assertThat(store.put(msg("x", "1", 0))).isTrue();
        assertThat(store.put(msg("y", "1", 0))).isTrue();
        assertThat(store.put(msg("z", "1", 0))).isFalse();
        assertThat(store.put(msg("x", "2", 0))).as("replacing is allowed").isTrue();
        store.put(msg("x", "", 0));
        assertThat(store.size()).isEqualTo(1);
        assertThat(store.put(msg("z", "1", 0))).isTrue();
    }

    @Test
    void expiredMessagesAreNotReturnedAndAreCleared() {
        RetainedStore store = new RetainedStore(10);
        store.put(msg("old", "v", System.currentTimeMillis() - 1));
        assertThat(topics(store, "#")).isEmpty();
        assertThat(store.size()).isZero();
    }
}
