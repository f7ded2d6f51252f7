package io.tbmq.broker.persistence.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisNode;

/** What the Redis Cluster ITs ask the masters directly: slot owners and the shape of raw replies. */
final class ClusterReplies {
    private ClusterReplies() {
    }

    /** The master that serves {@code slot}, by each node's own CLUSTER NODES line. */
    static RedisNode owner(List<RedisNode> nodes, int slot) {
        for (RedisNode n : nodes) {
            for (String line : RedisCli.command(n.port(), "CLUSTER NODES").split("\n")) {
                if (!line.contains("myself")) {
                    continue;
                }
                String[] f = line.trim().split(" ");
                for (int i = 8; i < f.length; i++) {
                    if (f[i].startsWith("[")) {
                        continue; // a slot being imported or migrated: "[slot-<-node]", "[slot->-node]"
                    }
                    String[] range = f[i].split("-");
                    int lo = Integer.parseInt(range[0]);
                    int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
                    if (slot >= lo && slot <= hi) {
                        return n;
                    }
                }
            }
        }
        throw new IllegalStateException("nobody serves slot " + slot);
    }

    static int slot(RedisNode any, byte[] key) {
        return (int) integer(RedisCli.command(any.port(), "CLUSTER KEYSLOT " + new String(key, StandardCharsets.UTF_8)));
    }

    /** An integer reply (":42"). */
    static long integer(String reply) {
        assertThat(reply).startsWith(":");
        return Long.parseLong(reply.substring(1).trim());
    }

    /** A bulk string reply ("$3\r\nabc\r\n"). */
    static String bulk(String reply) {
        assertThat(reply).startsWith("$");
        return reply.substring(reply.indexOf('\n') + 1).trim();
    }

    static DeviceMessageStore.Incoming incoming(long offset, String payload) {
        return new DeviceMessageStore.Incoming(0, 0, offset, 60, payload.getBytes(StandardCharsets.UTF_8));
    }

    static List<Integer> packetIds(List<DeviceMessageStore.Assigned> assigned) {
        return assigned.stream().map(DeviceMessageStore.Assigned::packetId).toList();
    }
}
