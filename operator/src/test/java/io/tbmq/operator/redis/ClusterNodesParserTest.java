package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ClusterNodesParserTest {
    private static final RedisNode NODE = new RedisNode(1, "127.0.0.1", 7001);

    @Test
    void readsTheMyselfLineSlotsAndOpenMigrations() {
        String reply = """
                aaa 127.0.0.1:7000@17000,redis-0 master - 0 1700000000000 1 connected 0-5460
                bbb 127.0.0.1:7001@17001,redis-1 myself,master - 0 0 2 connected 5461-10922 12000 [5461->-aaa] [16000-<-ccc]
                ccc 127.0.0.1:7002@17002,redis-2 master - 0 1700000000000 3 connected 10923-11999 12001-16383
                """;
        NodeState state = ClusterNodesParser.parse(NODE, reply);
        assertThat(state.id()).isEqualTo("bbb");
        assertThat(state.slotCount()).isEqualTo(10922 - 5461 + 1 + 1);
        assertThat(state.slots().get(12000)).isTrue();
        assertThat(state.migrating()).containsEntry(5461, "aaa");
        assertThat(state.importing()).containsEntry(16000, "ccc");
        assertThat(state.known()).containsExactlyInAnyOrder("aaa", "bbb", "ccc");
        assertThat(state.addresses()).containsEntry("aaa", "127.0.0.1:7000").containsEntry("ccc", "127.0.0.1:7002")
                .doesNotContainKey("bbb");
        assertThat(state.isAlone()).isFalse();
    }

    @Test
    void nodesItCannotReachAreNotKnownSoTheOperatorMeetsThemAgain() {
        // Every pod restarted with a new IP: each node still lists the others, failed, at their old addresses.
        String reply = """
                aaa 10.244.0.7:6379@16379,redis-0 master,fail - 1700000000000 1700000000000 1 connected 0-5460
                bbb 10.244.0.21:6379@16379,redis-1 myself,master - 0 0 2 connected 5461-10922
                ccc 10.244.0.9:6379@16379,redis-2 master,fail? - 1700000000000 1700000000000 3 connected 10923-16383
                ddd :0@0 master,noaddr - 0 0 4 disconnected
                eee 10.244.0.30:6379@16379 handshake - 0 0 0 disconnected
                """;
        NodeState state = ClusterNodesParser.parse(NODE, reply);
        // Only suspected (fail?) is not known either: with every node restarted none can reach a majority to
        // confirm it (RedisClusterRecoveryIT).
        assertThat(state.known()).containsExactly("bbb");
        assertThat(state.addresses()).as("where each was last seen: the operator meets one that restarted where it is now")
                .containsEntry("aaa", "10.244.0.7:6379").containsEntry("ccc", "10.244.0.9:6379").containsKey("ddd")
                .as("a handshake's id is a random one").doesNotContainKey("eee");
    }

    @Test
    void aFreshNodeIsAlone() {
        NodeState state = ClusterNodesParser.parse(NODE, "fff :7001@17001 myself,master - 0 0 0 connected\n");
        assertThat(state.isAlone()).isTrue();
        assertThat(state.slots().isEmpty()).isTrue();
    }

    @Test
    void aReplyWithoutMyselfIsRefused() {
        assertThatThrownBy(() -> ClusterNodesParser.parse(NODE, "aaa 127.0.0.1:7000@17000 master - 0 0 1 connected\n"))
                .hasMessageContaining("myself");
    }
}
