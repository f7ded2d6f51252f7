package io.tbmq.localstack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The local stack: Kafka, Redis (standalone or cluster) and broker nodes, started in that order
 * and stopped in reverse. One instance per test suite, {@code make run} or benchmark.
 */
public final class LocalStack implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final Path dir;
    private final KafkaNode kafka;
    private final RedisNode redis;
    private final RedisCluster redisCluster;
    private final List<BrokerNode> brokers = new ArrayList<>();

    private LocalStack(Builder b) {
        this.dir = b.dir;
        this.kafka = b.kafka ? new KafkaNode(dir.resolve("kafka"), b.kafkaHeap) : null;
        if (kafka != null) {
            b.kafkaJvmOptions.forEach(kafka::jvmOption);
        }
        this.redis = b.redis ? RedisNode.standalone(dir.resolve("redis"), b.redisSnapshots) : null;
        this.redisCluster = b.redisClusterMasters > 0
                ? new RedisCluster(dir.resolve("redis-cluster"), b.redisClusterMasters, b.redisSnapshots) : null;
    }

    public static Builder builder(Path dir) {
        return new Builder(dir);
    }

    public Path dir() {
        return dir;
    }

    public KafkaNode kafka() {
        return kafka;
    }

    public Optional<RedisNode> redis() {
        return Optional.ofNullable(redis);
    }

    public Optional<RedisCluster> redisCluster() {
        return Optional.ofNullable(redisCluster);
    }

    public List<BrokerNode> brokers() {
        return List.copyOf(brokers);
    }

    public BrokerNode broker(int index) {
        return brokers.get(index);
    }

    private LocalStack start() {
        try {
            Files.createDirectories(dir);
            if (kafka != null) {
                kafka.start(START_TIMEOUT);
            }
            if (redis != null) {
                redis.start(START_TIMEOUT);
            }
            if (redisCluster != null) {
                redisCluster.start(START_TIMEOUT);
            }
            return this;
        } catch (Exception e) {
            close();
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
    }

    /**
     * The configuration a broker node needs to use this stack: Kafka bootstrap and, when present,
     * the Redis Cluster (preferred) or the standalone Redis.
     */
    public Map<String, String> brokerConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        if (kafka != null) {
            config.put("tbmq.kafka.bootstrap-servers", kafka.bootstrapServers());
        }
        if (redisCluster != null) {
            config.put("tbmq.redis.mode", "cluster");
            config.put("tbmq.redis.nodes", redisCluster.addresses());
        } else if (redis != null) {
            config.put("tbmq.redis.mode", "standalone");
            config.put("tbmq.redis.nodes", redis.address());
        }
        return config;
    }

    /** Adds a broker node on free ports, configured for this stack plus {@code extra}, and starts it. */
    public BrokerNode startBroker(String nodeId, Path jar, Map<String, String> extra) {
        BrokerNode node = BrokerNode.onFreePorts(nodeId, jar, dir.resolve("broker-" + nodeId));
        node.config(brokerConfig()).config(extra);
        brokers.add(node);
        return node.start(START_TIMEOUT);
    }

    /** Adds a node with fixed ports (as {@code make run} does: 1883, 8883, ...) and starts it. */
    public BrokerNode startBroker(BrokerNode node) {
        node.config(brokerConfig());
        brokers.add(node);
        return node.start(START_TIMEOUT);
    }

    @Override
    public void close() {
        for (int i = brokers.size() - 1; i >= 0; i--) {
            brokers.get(i).stop(Duration.ofSeconds(30));
        }
        if (redisCluster != null) {
            redisCluster.stop();
        }
        if (redis != null) {
            redis.stop();
        }
        if (kafka != null) {
            kafka.stop();
        }
    }

    public static final class Builder {
        private final Path dir;
        private boolean kafka;
        private String kafkaHeap = "1g";
        private final List<String> kafkaJvmOptions = new ArrayList<>();
        private boolean redis;
        private int redisClusterMasters;
        private boolean redisSnapshots;

        private Builder(Path dir) {
            this.dir = dir.toAbsolutePath();
        }

        public Builder kafka() {
            this.kafka = true;
            return this;
        }

        public Builder kafkaHeap(String heap) {
            this.kafkaHeap = heap;
            return this;
        }

        public Builder kafkaJvmOption(String option) {
            this.kafkaJvmOptions.add(option);
            return this;
        }

        public Builder redis() {
            this.redis = true;
            return this;
        }

        public Builder redisCluster(int masters) {
            this.redisClusterMasters = masters;
            return this;
        }

        /** RDB snapshots on (the paper's production choice); off by default for tests. */
        public Builder redisSnapshots(boolean on) {
            this.redisSnapshots = on;
            return this;
        }

        public LocalStack start() {
            return new LocalStack(this).start();
        }
    }
}
