package io.tbmq.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.Persistence;
import io.tbmq.broker.record.SessionState;
import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.subscription.Subscriber;
import io.tbmq.broker.subscription.SubscriptionTrie;

class ClusterDirectoryTest {
    private final SubscriptionTrie trie = new SubscriptionTrie();
    private final ClusterDirectory directory = new ClusterDirectory(trie);

    private static SessionState state(String node, long version, String... filters) {
        List<SessionState.Sub> subs = java.util.Arrays.stream(filters)
                .map(f -> new SessionState.Sub(f, new SubscriptionOptions(1, false, false, 0, 0))).toList();
        return new SessionState("c1", 42, Persistence.DEVICE, 60, 0, subs, node, true, version, null, List.of());
    }

    private List<String> matching(String topic) {
        return trie.match(topic, "someone", id -> true).stream().map(Subscriber::clientId).toList();
    }

    @Test
    void anotherNodesSubscriptionsAreMatchedHere() {
        directory.apply(state("node-b", 1, "plant/+/cmd"));
        assertThat(matching("plant/7/cmd")).containsExactly("c1");
        assertThat(directory.find("c1").node()).isEqualTo("node-b");
        assertThat(directory.isConnected("c1")).isTrue();
    }

    @Test
    void aNewRecordReplacesTheSubscriptionsOfTheOldOne() {
        directory.apply(state("node-b", 1, "a/#", "b/#"));
        directory.apply(state("node-b", 1, "b/#", "c/#"));
        assertThat(matching("a/1")).isEmpty();
        assertThat(matching("b/1")).containsExactly("c1");
        assertThat(matching("c/1")).containsExactly("c1");
        assertThat(trie.size()).isEqualTo(2);
    }

    @Test
    void aStaleRecordFromTheNodeThatLostTheClientIsIgnored() {
        directory.apply(state("node-c", 5, "new/#"));
        assertThat(directory.apply(state("node-b", 4, "old/#"))).isFalse();
        assertThat(directory.find("c1").node()).isEqualTo("node-c");
        assertThat(matching("old/1")).isEmpty();
        // Equal versions from two nodes: the greater node id wins, on every node alike.
        assertThat(directory.apply(state("node-a", 5, "x/#"))).isFalse();
        assertThat(directory.apply(state("node-d", 5, "y/#"))).isTrue();
    }

    @Test
    void endedOrClaimedSessionsLeaveTheTrie() {
        directory.apply(state("node-b", 1, "a/#"));
        directory.remove("c1");
        assertThat(matching("a/1")).isEmpty();
        directory.apply(state("node-b", 2, "a/#"));
        directory.claim("c1", null);
        assertThat(directory.find("c1")).isNull();
        assertThat(trie.size()).isZero();
    }

    @Test
    void sessionsAreListedByTheirNode() {
        directory.apply(state("node-b", 1));
        assertThat(directory.nodes()).containsEntry("node-b", 1);
        assertThat(directory.heldBy("node-b")).hasSize(1);
        assertThat(directory.heldBy("node-c")).isEmpty();

        directory.apply(state("node-c", 2));
        assertThat(directory.nodes()).as("the client moved").containsOnlyKeys("node-c");
        assertThat(directory.heldBy("node-b")).isEmpty();
        assertThat(directory.heldBy("node-c")).extracting(SessionState::version).containsExactly(2L);
        directory.remove("c1");
        assertThat(directory.nodes()).isEmpty();
    }

    @Test
    void aClaimKeepsWhatTheLocalSessionSubscribedInTheTrie() {
        directory.apply(state("node-b", 1, "a/#", "b/#"));
        io.tbmq.broker.session.Session local = new io.tbmq.broker.session.Session("c1", 60, 10, false, (c, r) -> { });
        io.tbmq.broker.topic.TopicFilter a = io.tbmq.broker.topic.Topics.parseFilter("a/#", 10);
        local.subscriptions().put(a.key(), new io.tbmq.broker.session.Session.SubscriptionEntry(a,
                new SubscriptionOptions(1, false, false, 0, 0)));
        directory.claim("c1", local);
        assertThat(directory.find("c1")).isNull();
        assertThat(matching("a/1")).as("held here now").containsExactly("c1");
        assertThat(matching("b/1")).as("only the remote record had it").isEmpty();
    }
}
