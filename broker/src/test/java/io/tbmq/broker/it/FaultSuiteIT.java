package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;

import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.persistence.redis.RedisKeys;
import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.ManagedProcess;
import io.tbmq.localstack.RedisCli;
import io.tbmq.localstack.RedisCluster;
import io.tbmq.localstack.RedisNode;

/**
 * Faults of the parts around a broker node, with continuous clients running through each: QoS 1
 * and QoS 2 pairs with persistent subscribers. Afterwards, per pair: messages acknowledged to the
 * publisher, lost, duplicated (and whether DUP was set), reordered, and the longest delivery
 * pause; the rows go to docs/reliability.md. Redis is a 3-master Redis Cluster.
 */
class FaultSuiteIT {
    /** How long Redis and Kafka stay stopped: 30 s in make chaos, shorter in make test. */
    private static final int OUTAGE_SECONDS = Integer.getInteger("tbmq.chaos.outage-seconds", 12);
    private static ItStack it;
    private static BrokerNode broker;

    @BeforeAll
    static void start() {
        it = ItStack.isolatedCluster("fault-suite-it", Map.of("tbmq.shutdown.grace", "3s"));
        broker = it.broker();
        // Redis as the operator runs it: an append-only file, fsynced every second. Redis writes each
        // command to the file before it replies, so a crash of the Redis process loses nothing acknowledged.
        for (RedisNode node : it.stack().redisCluster().orElseThrow().appendOnly("everysec").nodes()) {
            assertThat(RedisCli.command(node.port(), "CONFIG SET appendfsync everysec")).startsWith("+OK");
            assertThat(RedisCli.command(node.port(), "CONFIG SET appendonly yes")).startsWith("+OK");
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> it.stack().redisCluster().orElseThrow().nodes().stream()
                .allMatch(n -> RedisCli.command(n.port(), "INFO persistence").contains("aof_rewrite_in_progress:0")
                        && RedisCli.command(n.port(), "INFO persistence").contains("aof_enabled:1")));
    }

    @AfterAll
    static void stop() {
        it.close();
    }

    private static List<ContinuousPair> pairs(String scenario) throws Exception {
        List<ContinuousPair> pairs = new ArrayList<>();
        for (int qos = 1; qos <= 2; qos++) {
            for (int i = 0; i < 2; i++) {
                List<Integer> port = List.of(broker.mqttPort());
                pairs.add(new ContinuousPair(port, port, scenario + "-q" + qos + "-" + i, 20, qos).start());
            }
        }
        return pairs;
    }

    @Test
    void redisUnreachableWhileEveryMasterIsStopped() throws Exception {
        List<ContinuousPair> pairs = pairs("redis-stop");
        ContinuousPair.awaitSeconds(4);
        List<ManagedProcess> masters = it.stack().redisCluster().orElseThrow().nodes().stream().map(RedisNode::process).toList();
        masters.forEach(ManagedProcess::suspend);
        try {
            ContinuousPair.awaitSeconds(OUTAGE_SECONDS);
        } finally {
            masters.forEach(ManagedProcess::resume);
        }
        ContinuousPair.awaitSeconds(6);
        report("Redis Cluster unreachable " + OUTAGE_SECONDS + " s (SIGSTOP of every master, then SIGCONT)", pairs);
    }

    @Test
    void redisMasterKilledAndRestarted() throws Exception {
        List<ContinuousPair> pairs = pairs("redis-kill");
        ContinuousPair.awaitSeconds(4);
        RedisCluster cluster = it.stack().redisCluster().orElseThrow();
        // The master holding the first pair's subscriber; the pairs whose subscribers live elsewhere must not wait for it.
        List<RedisNode> owners = pairs.stream().map(p -> owner(cluster, p.name() + "-sub")).toList();
        RedisNode victim = owners.get(0);
        assertThat(owners).as("some pair's subscriber lives on another master").anyMatch(o -> o != victim);
        victim.process().kill();
        ContinuousPair.awaitSeconds(5);
        victim.start(Duration.ofSeconds(30));
        cluster.awaitClusterOk(Duration.ofSeconds(30));
        ContinuousPair.awaitSeconds(8);
        List<ContinuousPair.Result> results = report("one Redis Cluster master killed (kill -9) and restarted 5 s later, AOF fsync everysec",
                pairs);
        for (int i = 0; i < pairs.size(); i++) {
            if (owners.get(i) != victim) {
                // Their messages are read past the ones waiting for the killed master (tbmq.kafka.msg-all-read-ahead).
                assertThat(results.get(i).longestPauseMillis()).as("%s, whose subscriber's keys are on a master that stayed up, paused (ms)",
                        pairs.get(i).name()).isLessThan(3_000);
            }
        }
    }

    /** The master holding {@code clientId}'s keys (the others answer MOVED). */
    private static RedisNode owner(RedisCluster cluster, String clientId) {
        String key = new String(new RedisKeys(0).messages(clientId), StandardCharsets.UTF_8);
        return cluster.nodes().stream().filter(n -> RedisCli.command(n.port(), "EXISTS " + key).startsWith(":")).findFirst()
                .orElseThrow(() -> new AssertionError("no master owns " + key));
    }

    @Test
    void kafkaStoppedAndResumed() throws Exception {
        List<ContinuousPair> pairs = pairs("kafka-stop");
        ContinuousPair.awaitSeconds(4);
        ManagedProcess kafka = it.stack().kafka().process();
        kafka.suspend();
        try {
            ContinuousPair.awaitSeconds(OUTAGE_SECONDS);
        } finally {
            kafka.resume();
        }
        ContinuousPair.awaitSeconds(8);
        report("Kafka stopped " + OUTAGE_SECONDS + " s (SIGSTOP, then SIGCONT)", pairs);
    }

    @Test
    void reconnectStormOfEverySubscriber() throws Exception {
        List<ContinuousPair> pairs = pairs("storm");
        // 300 more persistent subscribers with a few queued messages each, all dropping at once.
        int idle = 300;
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < idle; i++) {
            String id = "storm-idle-" + i;
            try (RawClient c = new RawClient(broker.mqttPort(), MqttVersion.MQTT_3_1_1)) {
                c.connect(id, "alice", false, 0);
                c.subscribe("storm/all", 1);
            }
            ids.add(id);
        }
        ContinuousPair.awaitSeconds(3);
        Mqtt5AsyncClient pub = Clients.alice5(broker, "storm-pub").toAsync();
        pub.publishWith().topic("storm/all").qos(MqttQos.AT_LEAST_ONCE).payload("while-away".getBytes()).send().get(10, TimeUnit.SECONDS);
        ExecutorService pool = Executors.newFixedThreadPool(50);
        try {
            pairs.forEach(ContinuousPair::reconnectSubscriber);
            List<CompletableFuture<Boolean>> reconnects = ids.stream().map(id -> CompletableFuture.supplyAsync(() -> {
                try (RawClient c = new RawClient(broker.mqttPort(), MqttVersion.MQTT_3_1_1)) {
                    boolean present = c.connect(id, "alice", false, 0).variableHeader().isSessionPresent();
                    RawClient.Received r = c.nextPublish(20_000);
                    return present && r != null && r.payload().equals("while-away");
                } catch (Exception e) {
                    return false;
                }
            }, pool)).toList();
            long ok = reconnects.stream().map(CompletableFuture::join).filter(b -> b).count();
            assertThat(ok).as("idle subscribers back with their session and queued message").isEqualTo(idle);
        } finally {
            pool.shutdownNow();
            pub.disconnect();
        }
        ContinuousPair.awaitSeconds(4);
        report("reconnect storm: every pair's subscriber and 300 idle persistent subscribers at once", pairs);
    }

    @Test
    void overloadGetsBackpressureNotOutOfMemory() throws Exception {
        List<ContinuousPair> pairs = pairs("overload");
        ContinuousPair.awaitSeconds(3);
        AtomicBoolean flooding = new AtomicBoolean(true);
        AtomicLong acked = new AtomicLong();
        List<Thread> floods = new ArrayList<>();
        byte[] payload = new byte[1024];
        for (int i = 0; i < 4; i++) {
            Mqtt5AsyncClient c = MqttClient.builder().useMqttVersion5().identifier("flood-" + i).serverHost("127.0.0.1")
                    .serverPort(broker.mqttPort()).buildAsync();
            c.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes()).applySimpleAuth().send()
                    .get(10, TimeUnit.SECONDS);
            Thread t = new Thread(() -> {
                // Keeps 2,000 publishes outstanding: the client holds what the broker's Receive Maximum does not admit.
                java.util.concurrent.Semaphore window = new java.util.concurrent.Semaphore(2000);
                while (flooding.get()) {
                    try {
                        window.acquire();
                    } catch (InterruptedException e) {
                        return;
                    }
                    c.publishWith().topic("flood/x").qos(MqttQos.AT_LEAST_ONCE).payload(payload).send()
                            .whenComplete((r, e) -> {
                                window.release();
                                if (e == null) {
                                    acked.incrementAndGet();
                                }
                            });
                }
                c.disconnect();
            }, "flood-" + i);
            t.start();
            floods.add(t);
        }
        long maxHeap = 0;
        for (int s = 0; s < 20; s++) {
            ContinuousPair.awaitSeconds(1);
            maxHeap = Math.max(maxHeap, heapUsed());
            assertThat(broker.status("/q/health/live")).as("broker alive under overload").isEqualTo(200);
        }
        flooding.set(false);
        for (Thread t : floods) {
            t.join(10_000);
        }
        System.out.printf("overload: %d flood messages of 1 KiB acknowledged in 20 s, broker heap at most %d MiB%n",
                acked.get(), maxHeap >> 20);
        assertThat(acked.get()).as("the flood made progress").isGreaterThan(1000);
        ContinuousPair.awaitSeconds(3);
        report("overload: 4 publishers keeping 2,000 QoS 1 messages of 1 KiB outstanding each, 20 s", pairs);
    }

    private static long heapUsed() {
        Matcher m = Pattern.compile("(?m)^jvm_memory_used_bytes\\{area=\"heap\"[^}]*} ([0-9.eE+]+)").matcher(broker.get("/q/metrics"));
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(1));
        }
        return (long) sum;
    }

    private static List<ContinuousPair.Result> report(String scenario, List<ContinuousPair> pairs) throws Exception {
        List<ContinuousPair.Result> results = new ArrayList<>();
        int acked = 0;
        int lost = 0;
        int dups = 0;
        int dupsWithoutDup = 0;
        int reordered = 0;
        long pause = 0;
        for (ContinuousPair pair : pairs) {
            ContinuousPair.Result r = pair.finish(90_000);
            results.add(r);
            acked += r.acked();
            lost += r.lost();
            dups += r.duplicates();
            dupsWithoutDup += r.duplicatesWithoutDup();
            reordered += r.reordered();
            pause = Math.max(pause, r.longestPauseMillis());
            assertThat(r.acked()).as("the publisher kept going").isGreaterThan(50);
        }
        System.out.printf("RELIABILITY | %s | %d | %d | %d (%d without DUP) | %d | %.1f s |%n", scenario, acked, lost, dups,
                dupsWithoutDup, reordered, pause / 1000.0);
        assertThat(lost).as("acknowledged but never delivered").isZero();
        assertThat(dupsWithoutDup).as("redelivered without DUP").isZero();
        assertThat(reordered).as("out of order").isZero();
        return results;
    }
}
