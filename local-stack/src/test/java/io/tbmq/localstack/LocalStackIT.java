package io.tbmq.localstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalStackIT {

    @Test
    void startsKafkaRedisAndClusterAndStopsEveryProcess(@TempDir Path dir) throws Exception {
        List<ManagedProcess> processes;
        try (LocalStack stack = LocalStack.builder(dir).kafka().redis().redisCluster(3).start()) {
            Properties config = new Properties();
            config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.kafka().bootstrapServers());
            try (Admin admin = Admin.create(config)) {
                admin.createTopics(List.of(new NewTopic("probe", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
                assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS)).contains("probe");
            }
            RedisNode redis = stack.redis().orElseThrow();
            assertThat(RedisCli.command(redis.port(), "SET k v")).startsWith("+OK");
            RedisCluster cluster = stack.redisCluster().orElseThrow();
            for (RedisNode node : cluster.nodes()) {
                assertThat(RedisCli.command(node.port(), "CLUSTER INFO")).contains("cluster_state:ok", "cluster_known_nodes:3");
            }
            processes = new java.util.ArrayList<>();
            processes.add(stack.kafka().process());
            processes.add(redis.process());
            cluster.nodes().forEach(n -> processes.add(n.process()));
            assertThat(processes).allMatch(ManagedProcess::isAlive);
            assertThat(processes.stream().map(ManagedProcess::pid).distinct()).hasSize(5);
        }
        assertThat(processes).noneMatch(ManagedProcess::isAlive);
        for (ManagedProcess p : processes) {
            assertThat(ProcessHandle.of(p.pid()).map(ProcessHandle::isAlive).orElse(false))
                    .as("%s still running", p).isFalse();
        }
    }

    @Test
    void portsAreDistinctAndFree() {
        Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; i < 50; i++) {
            int port = Ports.free();
            assertThat(seen.add(port)).isTrue();
            assertThat(Ports.bindable(port)).isTrue();
        }
        int bus = Ports.freeWithBus();
        assertThat(Ports.bindable(bus + Ports.REDIS_BUS_OFFSET)).isTrue();
    }
}
