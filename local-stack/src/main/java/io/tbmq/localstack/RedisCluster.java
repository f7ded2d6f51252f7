package io.tbmq.localstack;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** A Redis Cluster of N masters and no replicas (the paper's test set-up), created with redis-cli. */
public final class RedisCluster implements AutoCloseable {
    private final List<RedisNode> nodes = new ArrayList<>();

    public RedisCluster(Path dir, int masters, boolean snapshots) {
        for (int i = 0; i < masters; i++) {
            int port = Ports.freeWithBus();
            nodes.add(new RedisNode(dir.resolve("node-" + port), port, true, snapshots));
        }
    }

    /** Every node with an append-only file fsynced so ({@link RedisNode#appendOnly}); takes effect at the next start. */
    public RedisCluster appendOnly(String fsync) {
        nodes.forEach(n -> n.appendOnly(fsync));
        return this;
    }

    public List<RedisNode> nodes() {
        return List.copyOf(nodes);
    }

    /** Comma-separated host:port list, the form the broker's configuration takes. */
    public String addresses() {
        return nodes.stream().map(RedisNode::address).collect(Collectors.joining(","));
    }

    public RedisCluster start(Duration timeout) {
        for (RedisNode node : nodes) {
            node.start(timeout);
        }
        if (!RedisCli.command(nodes.get(0).port(), "CLUSTER INFO").contains("cluster_state:ok")) {
            List<String> args = new ArrayList<>(List.of("--cluster", "create"));
            nodes.forEach(n -> args.add(n.address()));
            args.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            RedisCli.run(args);
        }
        awaitClusterOk(timeout);
        return this;
    }

    public void awaitClusterOk(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            boolean ok = nodes.stream().allMatch(n -> RedisCli.command(n.port(), "CLUSTER INFO").contains("cluster_state:ok"));
            if (ok) {
                return;
            }
            KafkaNode.sleep(100);
        }
        throw new IllegalStateException("Redis Cluster not ok within " + timeout);
    }

    public void stop() {
        nodes.forEach(RedisNode::stop);
    }

    @Override
    public void close() {
        stop();
    }
}
