package io.tbmq.broker.subscription;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.record.SubscriptionOptions;
import io.tbmq.broker.topic.Topics;

class SubscriptionTrieTest {
    private final SubscriptionTrie trie = new SubscriptionTrie();

    private void sub(String client, String filter, int qos) {
        trie.subscribe(client, Topics.parseFilter(filter, 32), SubscriptionOptions.qos(qos));
    }

    private Map<String, Subscriber> match(String topic) {
        return trie.match(topic, "publisher", c -> true).stream()
                .collect(Collectors.toMap(Subscriber::clientId, Function.identity()));
    }

    @Test
    void matchesExactWildcardAndMultiLevelFilters() {
        sub("exact", "europe/ua/kyiv/1/x", 1);
        sub("plus", "europe/ua/kyiv/1/+", 1);
        sub("hash", "europe/#", 0);
        sub("other", "europe/ua/lviv/#", 2);
        assertThat(match("europe/ua/kyiv/1/x")).containsOnlyKeys("exact", "plus", "hash");
        assertThat(match("europe")).containsOnlyKeys("hash");
    }

    @Test
    void oneClientWithOverlappingFiltersGetsOneEntryAtTheHighestQos() {
        sub("c", "a/+", 0);
        sub("c", "a/#", 2);
        sub("c", "#", 1);
        List<Subscriber> found = trie.match("a/b", "p", c -> true);
        assertThat(found).hasSize(1);
        assertThat(found.get(0).qos()).isEqualTo(2);
    }

    @Test
    void noLocalSkipsOnlyThePublishersOwnSubscription() {
        trie.subscribe("self", Topics.parseFilter("t", 32), new SubscriptionOptions(1, true, false, 0, 0));
        trie.subscribe("other", Topics.parseFilter("t", 32), new SubscriptionOptions(1, true, false, 0, 0));
        assertThat(trie.match("t", "self", c -> true)).extracting(Subscriber::clientId).containsExactly("other");
    }

    @Test
    void sharedGroupDeliversToOneConnectedMemberRoundRobin() {
        for (String m : List.of("m1", "m2", "m3")) {
            sub(m, "$share/g/jobs/#", 1);
        }
        Map<String, Integer> counts = new java.util.HashMap<>();
        for (int i = 0; i < 30; i++) {
            List<Subscriber> got = trie.match("jobs/" + i, "p", c -> !c.equals("m2"));
            assertThat(got).hasSize(1);
            counts.merge(got.get(0).clientId(), 1, Integer::sum);
        }
        assertThat(counts).containsOnlyKeys("m1", "m3");
        assertThat(counts.get("m1")).isEqualTo(15);
    }

    @Test
    void sharedAndOrdinarySubscriptionsOfOneClientAreSeparateCopies() {
        sub("c", "$share/g/t", 1);
        sub("c", "t", 1);
        assertThat(trie.match("t", "p", x -> true)).hasSize(2);
    }

    @Test
    void unsubscribePrunesEmptyBranchesAndCounts() {
        sub("a", "x/y/z", 1);
        sub("b", "x/y", 1);
        assertThat(trie.size()).isEqualTo(2);
        assertThat(trie.unsubscribe("a", Topics.parseFilter("x/y/z", 32))).isTrue();
        assertThat(trie.unsubscribe("a", Topics.parseFilter("x/y/z", 32))).isFalse();
        assertThat(match("x/y/z")).isEmpty();
        assertThat(match("x/y")).containsOnlyKeys("b");
        assertThat(trie.size()).isEqualTo(1);
    }

    @Test
    void resubscribeReplacesOptions() {
        assertThat(trie.subscribe("c", Topics.parseFilter("t", 32), SubscriptionOptions.qos(0))).isFalse();
        assertThat(trie.subscribe("c", Topics.parseFilter("t", 32), SubscriptionOptions.qos(2))).isTrue();
        assertThat(match("t").get("c").qos()).isEqualTo(2);
        assertThat(trie.size()).isEqualTo(1);
    }

    @Test
    void dollarTopicsAreNotMatchedByFirstLevelWildcards() {
        sub("hash", "#", 1);
        sub("plus", "+/status", 1);
        sub("named", "$SYS/status", 1);
        assertThat(match("$SYS/status")).containsOnlyKeys("named");
    }
}
