package io.tbmq.operator.redis;

import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Reads a node's own state out of its CLUSTER NODES reply: the "myself" line's slots and open
 * migrations ({@code [slot->-target]}, {@code [slot-<-source]}), and the ids and addresses of the
 * nodes it can talk to. A node flagged {@code fail}, {@code fail?}, {@code noaddr} or {@code handshake} is not
 * known: after every pod restarted with a new address, each node lists the others at their old
 * addresses, and only a CLUSTER MEET at the new ones joins them again. When all of them restarted
 * together no node can reach a majority to turn its suspicion ({@code fail?}) into {@code fail}, so
 * waiting for {@code fail} would wait for good. Where a node lists each other node is kept whatever
 * its flags (a handshake's id is a random one, so it is left out): the planner meets a node listed
 * at an old address, and waits for one flagged where it is now.
 */
public final class ClusterNodesParser {
    private ClusterNodesParser() {
    }

    public static NodeState parse(RedisNode node, String clusterNodes) {
        String myId = null;
        BitSet slots = new BitSet(SlotPlanner.SLOTS);
        Map<Integer, String> migrating = new HashMap<>();
        Map<Integer, String> importing = new HashMap<>();
        Set<String> known = new HashSet<>();
        Map<String, String> addresses = new HashMap<>();
        for (String line : clusterNodes.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length < 8) {
                continue;
            }
            String flags = ',' + f[2] + ',';
            if (!flags.contains(",myself,")) {
                if (flags.contains(",handshake,")) {
                    continue;
                }
                // ip:port@cport[,hostname]
                int bus = f[1].indexOf('@');
                addresses.put(f[0], bus < 0 ? f[1] : f[1].substring(0, bus));
                if (!flags.contains(",fail,") && !flags.contains(",fail?,") && !flags.contains(",noaddr,")) {
                    known.add(f[0]);
                }
                continue;
            }
            known.add(f[0]);
            myId = f[0];
            for (int i = 8; i < f.length; i++) {
                String token = f[i];
                if (token.startsWith("[")) {
                    String body = token.substring(1, token.length() - 1);
                    int out = body.indexOf("->-");
                    int in = body.indexOf("-<-");
                    if (out > 0) {
                        migrating.put(Integer.parseInt(body.substring(0, out)), body.substring(out + 3));
                    } else if (in > 0) {
                        importing.put(Integer.parseInt(body.substring(0, in)), body.substring(in + 3));
                    }
                } else if (token.contains("-")) {
                    int dash = token.indexOf('-');
                    slots.set(Integer.parseInt(token.substring(0, dash)), Integer.parseInt(token.substring(dash + 1)) + 1);
                } else if (!token.isEmpty()) {
                    slots.set(Integer.parseInt(token));
                }
            }
        }
        if (myId == null) {
            throw new IllegalArgumentException("CLUSTER NODES of " + node + " has no myself line");
        }
        return new NodeState(node, myId, slots, migrating, importing, known, addresses);
    }
}
