package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.ManagedProcess;

/**
 * Health, metrics, a fenced Kafka consumer, a second broker given the node's id, a broker of another
 * cluster given the same Kafka topics, a Kafka outage,
 * graceful shutdown and the termination message of a failed start, on a stack of its own (this test
 * stops Kafka and the broker).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperationsIT {
    private static ItStack it;
    private static BrokerNode broker;

    @BeforeAll
    static void start() {
        it = ItStack.isolated("ops-stack");
        broker = it.broker();
    }

    @AfterAll
    static void stop() {
        it.close();
    }

    @Test
    @Order(1)
    void healthAndPrometheusMetrics() {
        assertThat(broker.status("/q/health/live")).isEqualTo(200);
        assertThat(broker.status("/q/health/ready")).isEqualTo(200);
        Mqtt5BlockingClient c = Clients.alice5(broker, "ops-metrics");
        c.subscribeWith().topicFilter("ops/m").qos(MqttQos.AT_LEAST_ONCE).send();
        try (var received = c.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            c.publishWith().topic("ops/m").qos(MqttQos.AT_LEAST_ONCE).payload("x".getBytes()).send();
            assertThat(received.receive(10, TimeUnit.SECONDS)).isPresent();
            // A new cluster's routing consumers may take their partitions just after the first
            // message was written: nobody read those partitions before, so it goes out as new
            // (LogConsumerIT). Still, a first poll that failed while the node was starting would be
            // read again and its copies go out as redeliveries, which the latency leaves out; the
            // second is written once the consumers run.
            c.publishWith().topic("ops/m").qos(MqttQos.AT_LEAST_ONCE).payload("y".getBytes()).send();
            assertThat(received.receive(10, TimeUnit.SECONDS)).isPresent();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        Awaitility.await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            String metrics = broker.get("/q/metrics");
            assertThat(metrics).contains("tbmq_messages_in_total{qos=\"1\"} 2.0");
            assertThat(metrics).contains("tbmq_messages_out_total{qos=\"1\"} 2.0");
            assertThat(metrics).contains("tbmq_connections{listener=\"tcp\"} 1.0");
            assertThat(metrics).contains("tbmq_kafka_produce_latency_seconds_count 2");
            assertThat(metrics).contains("tbmq_delivery_latency_seconds_bucket");
            assertThat(metrics).containsAnyOf("tbmq_live_delivery_latency_seconds_count 1", "tbmq_live_delivery_latency_seconds_count 2");
            assertThat(metrics).as("exported at 0 for the alert on shed connections")
                    .contains("tbmq_connections_shed_total{listener=\"tcp\",reason=\"limit\"} 0.0",
                            "tbmq_connections_shed_total{listener=\"tcp\",reason=\"rate\"} 0.0");
        });
        c.disconnect();
    }

    @Test
    @Order(2)
    void theLiveDeliveryLatencyLeavesOutWhatWaitedForAnOfflineDeviceAndRetainedMessages() throws Exception {
        String before = broker.get("/q/metrics");
        Mqtt5BlockingClient device = Clients.v5(broker, "ops-latency-device").buildBlocking();
        connectPersistent(device);
        device.subscribeWith().topicFilter("ops/backlog").qos(MqttQos.AT_LEAST_ONCE).send();
        device.disconnect();
        Mqtt5BlockingClient publisher = Clients.alice5(broker, "ops-latency-publisher");
        publisher.publishWith().topic("ops/backlog").qos(MqttQos.AT_LEAST_ONCE).payload("waited".getBytes()).send();
        publisher.publishWith().topic("ops/retained").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("kept".getBytes()).send();
        Thread.sleep(1_500); // both are over a second old when they go out
        device = Clients.v5(broker, "ops-latency-device").buildBlocking();
        // Listening before the CONNECT: the stored message follows the CONNACK at once.
        try (Mqtt5BlockingClient.Mqtt5Publishes in = device.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            connectPersistent(device);
            assertThat(in.receive(10, TimeUnit.SECONDS)).as("the stored message").hasValueSatisfying(
                    m -> assertThat(Clients.text(m.getPayloadAsBytes())).isEqualTo("waited"));
            device.subscribeWith().topicFilter("ops/retained").qos(MqttQos.AT_LEAST_ONCE).send();
            assertThat(in.receive(10, TimeUnit.SECONDS)).as("the retained message").hasValueSatisfying(
                    m -> assertThat(Clients.text(m.getPayloadAsBytes())).isEqualTo("kept"));
            publisher.publishWith().topic("ops/backlog").qos(MqttQos.AT_LEAST_ONCE).payload("live".getBytes()).send();
            assertThat(in.receive(10, TimeUnit.SECONDS)).as("a live message").hasValueSatisfying(
                    m -> assertThat(Clients.text(m.getPayloadAsBytes())).isEqualTo("live"));
        }
        Awaitility.await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            String after = broker.get("/q/metrics");
            assertThat(deliveries(after, "tbmq_delivery_latency_seconds") - deliveries(before, "tbmq_delivery_latency_seconds"))
                    .as("all three deliveries").isEqualTo(3);
            assertThat(lateDeliveries(after, "tbmq_delivery_latency_seconds") - lateDeliveries(before, "tbmq_delivery_latency_seconds"))
                    .as("the stored and the retained message, over a second old").isEqualTo(2);
            assertThat(deliveries(after, "tbmq_live_delivery_latency_seconds") - deliveries(before, "tbmq_live_delivery_latency_seconds"))
                    .as("the live message alone").isEqualTo(1);
            assertThat(lateDeliveries(after, "tbmq_live_delivery_latency_seconds")
                    - lateDeliveries(before, "tbmq_live_delivery_latency_seconds")).as("none of them late").isZero();
        });
        device.disconnect();
        publisher.publishWith().topic("ops/retained").retain(true).payload(new byte[0]).send();
        publisher.disconnect();
    }

    /** The count of a histogram in a scrape of /q/metrics. */
    private static long deliveries(String metrics, String histogram) {
        return metrics.lines().filter(l -> l.startsWith(histogram + "_count ")).mapToLong(OperationsIT::sampleValue).findFirst()
                .orElseThrow();
    }

    /** How many of a histogram's observations are above its highest bucket bound of at most one second. */
    private static long lateDeliveries(String metrics, String histogram) {
        String bucket = histogram + "_bucket{le=\"";
        double bound = -1;
        long withinBound = 0;
        for (String line : metrics.lines().filter(l -> l.startsWith(bucket)).toList()) {
            String le = line.substring(bucket.length(), line.indexOf('"', bucket.length()));
            if (!le.equals("+Inf") && Double.parseDouble(le) <= 1.0 && Double.parseDouble(le) > bound) {
                bound = Double.parseDouble(le);
                withinBound = sampleValue(line);
            }
        }
        return deliveries(metrics, histogram) - withinBound;
    }

    private static long sampleValue(String line) {
        return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }

    private static void connectPersistent(Mqtt5BlockingClient c) {
        c.connectWith().cleanStart(false).sessionExpiryInterval(600).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
    }

    @Test
    @Order(3)
    void aRoutingConsumerFencedByAnotherWithItsIdentityFailsLivenessAndARestartRoutesAgain() throws Exception {
        // What a second node started with this node's id does: it joins the routing group as the
        // same static member, and Kafka fences this node's consumer of tbmq.msg.all.
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, it.stack().kafka().bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "tbmq-msg-all-router");
        p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "tbmq-" + broker.nodeId() + "-msg-all-0");
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        try (KafkaConsumer<byte[], byte[]> impostor = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            impostor.subscribe(List.of("tbmq.msg.all"));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                impostor.poll(Duration.ofMillis(200));
                return broker.status("/q/health/live") == 503;
            });
        }
        assertThat(broker.get("/q/health/live")).as("names the consumer that stopped")
                .contains("kafka consumer stopped: tbmq.msg.all");
        // What the kubelet does on the failed liveness probe: the restarted node takes its identity back.
        broker.restart(Duration.ofSeconds(60));
        assertThat(broker.status("/q/health/live")).isEqualTo(200);
        Mqtt5BlockingClient c = Clients.alice5(broker, "ops-fenced");
        try (Mqtt5BlockingClient.Mqtt5Publishes in = c.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            c.subscribeWith().topicFilter("ops/fenced").qos(MqttQos.AT_LEAST_ONCE).send();
            c.publishWith().topic("ops/fenced").qos(MqttQos.AT_LEAST_ONCE).payload("routed".getBytes()).send();
            assertThat(in.receive(30, TimeUnit.SECONDS)).as("routed through tbmq.msg.all again").hasValueSatisfying(
                    m -> assertThat(Clients.text(m.getPayloadAsBytes())).isEqualTo("routed"));
        }
        c.disconnect();
    }

    @Test
    @Order(4)
    void aSecondBrokerWithThisNodesIdRefusesToStartAndLeavesTheFirstAlone() throws Exception {
        Mqtt5BlockingClient watcher = Clients.alice5(broker, "ops-twin-watcher");
        Mqtt5BlockingClient device = Clients.v5(broker, "ops-twin-device").buildBlocking();
        device.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .applySimpleAuth().willPublish().topic("ops/twin/will").qos(MqttQos.AT_LEAST_ONCE).payload("gone".getBytes())
                .applyWillPublish().send();
        long fencedBefore = fencings();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = watcher.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            watcher.subscribeWith().topicFilter("ops/twin/#").qos(MqttQos.AT_LEAST_ONCE).send();
            // A copy of this node's configuration started elsewhere, against the same Kafka.
            Path terminationLog = Files.createDirectories(it.dir().resolve("twin")).resolve("termination-log");
            Files.writeString(terminationLog, "");
            assertThatThrownBy(() -> it.startBroker(broker.nodeId(), "twin", java.util.Map.of("tbmq.termination-message-path",
                    terminationLog.toString()))).hasMessageContaining("exited during start");
            Path twinLog = it.dir().resolve("twin").resolve("broker-" + broker.nodeId() + ".log");
            assertThat(Files.readString(twinLog)).as("says why")
                    .contains("runs with node id " + broker.nodeId() + ", so this one does not start", "tbmq.node-id (TBMQ_NODE_ID)");
            assertThat(Files.readString(terminationLog)).as("the termination message Kubernetes shows")
                    .startsWith("node " + broker.nodeId() + " failed to start while checking that no other broker runs with node id")
                    .contains("runs with node id " + broker.nodeId() + ", so this one does not start", "tbmq.node-id (TBMQ_NODE_ID)")
                    .doesNotContain("\tat ");
            // The first one kept its consumers and its sessions: it routes, and its device's Will did not go out.
            assertThat(broker.status("/q/health/live")).isEqualTo(200);
            watcher.publishWith().topic("ops/twin/after").qos(MqttQos.AT_LEAST_ONCE).payload("routed".getBytes()).send();
            assertThat(in.receive(30, TimeUnit.SECONDS)).as("the first message the watcher gets").hasValueSatisfying(
                    m -> assertThat(Clients.text(m.getPayloadAsBytes())).isEqualTo("routed"));
            assertThat(fencings()).as("the first one's consumers fenced").isEqualTo(fencedBefore);

            // A second process that got past that check (the two started at one moment) is heard and reported.
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, it.stack().kafka().bootstrapServers());
            assertThat(duplicateHeartbeats(broker.get("/q/metrics"))).as("exported at 0 for the alert").isZero();
            try (KafkaProducer<byte[], byte[]> twin = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
                twin.send(new ProducerRecord<>("tbmq.cluster.nodes", broker.nodeId().getBytes(StandardCharsets.UTF_8),
                        (System.currentTimeMillis() + " incarnation 0123abcd").getBytes(StandardCharsets.UTF_8))).get();
            }
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(duplicateHeartbeats(broker.get("/q/metrics"))).isEqualTo(1);
                assertThat(Files.readString(broker.log())).contains("another broker process (0123abcd,",
                        "runs with node id " + broker.nodeId() + ", beside this one");
            });
            assertThat(broker.status("/q/health/live")).isEqualTo(200);
            assertThat(in.receive(1, TimeUnit.SECONDS)).as("the device's Will").isEmpty();
        }
        device.disconnect();
        watcher.disconnect();
    }

    private static long duplicateHeartbeats(String metrics) {
        return metrics.lines().filter(l -> l.startsWith("tbmq_cluster_node_id_duplicate_heartbeats_total"))
                .mapToLong(OperationsIT::sampleValue).findFirst().orElseThrow();
    }

    /** Times Kafka fenced one of the first broker's consumers, from its log. */
    private static long fencings() throws java.io.IOException {
        return Files.readAllLines(broker.log()).stream().filter(l -> l.contains("stopped: org.apache.kafka.common.errors.Fenced"))
                .count();
    }

    @Test
    @Order(5)
    void aBrokerOfAnotherClusterOnTheSameKafkaTopicsRefusesToStartAndARunningOneReportsIt() throws Exception {
        Path terminationLog = Files.createDirectories(it.dir().resolve("other-cluster")).resolve("termination-log");
        Files.writeString(terminationLog, "");

        // Another TbmqCluster's broker given this cluster's Kafka and no topic prefix of its own.
        assertThatThrownBy(() -> it.startBroker("other-broker-0", "other-cluster", java.util.Map.of("tbmq.cluster.name", "it/other",
                "tbmq.termination-message-path", terminationLog.toString()))).hasMessageContaining("exited during start");

        assertThat(Files.readString(terminationLog)).as("the termination message Kubernetes shows").contains(
                "failed to start while checking that no other cluster uses these Kafka topics",
                "node " + broker.nodeId() + " of cluster " + ItStack.CLUSTER + " sent a heartbeat to tbmq.cluster.nodes",
                "Kafka topics of this cluster (it/other), so this node does not start", "tbmq.kafka.topic-prefix");
        assertThat(broker.status("/q/health/live")).isEqualTo(200);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, it.stack().kafka().bootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(p)) {
            assertThat(admin.listTopics().names().get()).as("topics the refused broker left on the other cluster's Kafka")
                    .noneMatch(t -> t.endsWith(".other-broker-0"));
            // The running broker prepares to send to every live node's downlink topics.
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("tbmq.msg.downlink.basic.other-broker-1", 1, (short) 1),
                    new org.apache.kafka.clients.admin.NewTopic("tbmq.msg.downlink.persisted.other-broker-1", 1, (short) 1))).all().get();
        }

        // One that got past the check (the two started together) is heard, counted and logged by the running one.
        assertThat(foreignHeartbeats(broker.get("/q/metrics"))).as("exported at 0 for the alert").isZero();
        try (KafkaProducer<byte[], byte[]> other = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            byte[] node = "other-broker-1".getBytes(StandardCharsets.UTF_8);
            other.send(new ProducerRecord<>("tbmq.cluster.nodes", node, (System.currentTimeMillis() + " incarnation 5eed cluster it/other")
                    .getBytes(StandardCharsets.UTF_8))).get();
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(foreignHeartbeats(broker.get("/q/metrics"))).isEqualTo(1);
                assertThat(Files.readString(broker.log())).contains("node other-broker-1 of cluster it/other sent a heartbeat",
                        "Kafka topics of this cluster (" + ItStack.CLUSTER + "), beside this one");
            });
            other.send(new ProducerRecord<>("tbmq.cluster.nodes", node, null)).get(); // it left
        }
        assertThat(broker.status("/q/health/live")).isEqualTo(200);
        assertThat(broker.status("/q/health/ready")).isEqualTo(200);
    }

    private static long foreignHeartbeats(String metrics) {
        return metrics.lines().filter(l -> l.startsWith("tbmq_cluster_foreign_heartbeats_total"))
                .mapToLong(OperationsIT::sampleValue).findFirst().orElseThrow();
    }

    @Test
    @Order(6)
    void kafkaOutageMakesTheNodeUnreadyAndPublishersGetAReasonCodeThenItRecovers() {
        ManagedProcess kafka = it.stack().kafka().process();
        Mqtt5BlockingClient c = Clients.alice5(broker, "ops-outage");
        kafka.suspend();
        try {
            assertThatThrownBy(() -> c.publishWith().topic("ops/outage").qos(MqttQos.AT_LEAST_ONCE)
                    .payload("during".getBytes()).send()).isInstanceOfSatisfying(Mqtt5PubAckException.class,
                    e -> assertThat(e.getMqttMessage().getReasonCode()).isEqualTo(Mqtt5PubAckReasonCode.UNSPECIFIED_ERROR));
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> broker.status("/q/health/ready") == 503);
            assertThat(broker.status("/q/health/live")).as("alive, only not ready").isEqualTo(200);
        } finally {
            kafka.resume();
        }
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> broker.status("/q/health/ready") == 200);
        Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            c.publishWith().topic("ops/outage").qos(MqttQos.AT_LEAST_ONCE).payload("after".getBytes()).send();
            return true;
        });
        c.disconnect();
    }

    @Test
    @Order(7)
    void gracefulShutdownTellsV5ClientsServerShuttingDown() throws Exception {
        CompletableFuture<Throwable> cause = new CompletableFuture<>();
        Mqtt5BlockingClient c = Clients.v5(broker, "ops-shutdown").addDisconnectedListener(ctx -> cause.complete(ctx.getCause()))
                .buildBlocking();
        c.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                .applySimpleAuth().send();
        long start = System.nanoTime();
        broker.stop(Duration.ofSeconds(30));
        assertThat(cause.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(Mqtt5DisconnectException.class,
                e -> assertThat(e.getMqttMessage().getReasonCode()).isEqualTo(Mqtt5DisconnectReasonCode.SERVER_SHUTTING_DOWN));
        assertThat(broker.process().isAlive()).isFalse();
        assertThat(broker.process().exitCode()).as("clean exit on SIGTERM").isIn(0, 143);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
    }

    @Test
    @Order(8)
    void aBrokerWhoseConfigurationIsInvalidWritesWhichKeyAsItsTerminationMessage() throws Exception {
        Path terminationLog = Files.createDirectories(it.dir().resolve("misconfigured")).resolve("termination-log");
        Files.writeString(terminationLog, "");

        assertThatThrownBy(() -> it.startBroker("ops-misconfigured", "misconfigured", java.util.Map.of(
                "tbmq.termination-message-path", terminationLog.toString(), "tbmq.mqtt.max-packet-size", "lots")))
                .hasMessageContaining("exited during start");

        assertThat(Files.readString(terminationLog)).as("the termination message Kubernetes shows")
                .contains("tbmq.mqtt.max-packet-size", "lots").doesNotContain("\tat ");
    }
}
