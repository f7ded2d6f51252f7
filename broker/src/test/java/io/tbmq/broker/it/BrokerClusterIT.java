package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;

import io.tbmq.localstack.BrokerNode;

/**
 * Three broker processes on one Kafka and a 3-master Redis Cluster, cooperating only through
 * Kafka: a client may connect to any node and its subscriber may be on another.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BrokerClusterIT {
    private static final Map<String, String> CLUSTER = Map.of("tbmq.cluster.node-timeout", "4s",
            "tbmq.cluster.heartbeat-interval", "1s", "tbmq.kafka.msg-all-partitions", "6",
            "tbmq.persistence.persisted-partitions", "6", "tbmq.cluster.downlink-retention", "6s");
    private static ItStack it;
    private static BrokerNode a;
    private static BrokerNode b;
    private static BrokerNode c;

    @BeforeAll
    static void start() {
        it = ItStack.isolatedCluster("broker-cluster-it", CLUSTER);
        a = it.broker();
        b = it.startBroker("node-b", CLUSTER);
        c = it.startBroker("node-c", CLUSTER);
    }

    @AfterAll
    static void stop() {
        if (it != null) {
            it.close();
        }
    }

    @Test
    @Order(1)
    void publishOnOneNodeReachesSubscribersOnTheOthersAtEveryQos() throws Exception {
        for (MqttQos qos : MqttQos.values()) {
            Mqtt5BlockingClient sub = Clients.alice5(a, "sub-" + qos.getCode());
            sub.subscribeWith().topicFilter("plant/+/cmd").qos(qos).send();
            try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
                awaitVisible(c, "plant/1/cmd", in);
                Mqtt5BlockingClient pub = Clients.alice5(c, "pub-" + qos.getCode());
                for (int i = 0; i < 20; i++) {
                    // One topic: MQTT orders messages per topic, and so does the cluster (one Kafka partition).
                    pub.publishWith().topic("plant/7/cmd").qos(qos).payload(("m" + i).getBytes()).send();
                }
                List<String> got = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    Optional<Mqtt5Publish> p = in.receive(10, TimeUnit.SECONDS);
                    assertThat(p).as("message %d at %s", i, qos).isPresent();
                    assertThat(p.get().getQos()).isEqualTo(qos);
                    got.add(Clients.text(p.get().getPayloadAsBytes()));
                }
                assertThat(got).as("every message, once, in order").containsExactlyElementsOf(
                        java.util.stream.IntStream.range(0, 20).mapToObj(i -> "m" + i).toList());
                pub.disconnect();
            }
            sub.disconnect();
        }
    }

    @Test
    @Order(2)
    void retainedMessageSetOnOneNodeIsDeliveredToANewSubscriberOnAnother() throws Exception {
        Mqtt5BlockingClient pub = Clients.alice5(b, "retainer");
        pub.publishWith().topic("site/state").qos(MqttQos.AT_LEAST_ONCE).retain(true).payload("running".getBytes()).send();
        pub.disconnect();
        String got = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (got == null && System.nanoTime() < deadline) {
            Mqtt5BlockingClient sub = Clients.alice5(a, "retained-reader");
            try (Mqtt5BlockingClient.Mqtt5Publishes in = sub.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
                sub.subscribeWith().topicFilter("site/#").qos(MqttQos.AT_LEAST_ONCE).send();
                got = in.receive(1, TimeUnit.SECONDS).map(p -> p.isRetain() + ":" + Clients.text(p.getPayloadAsBytes())).orElse(null);
            }
            sub.disconnect();
        }
        assertThat(got).isEqualTo("true:running");
    }

    @Test
    @Order(3)
    void persistentSubscriberReconnectingToAnotherNodeGetsItsQueueInOrder() throws Exception {
        double known = subscriptions(b);
        Mqtt5BlockingClient device = Clients.v5(a, "device-7").buildBlocking();
        connectPersistent(device);
        device.subscribeWith().topicFilter("cmd/device-7").qos(MqttQos.AT_LEAST_ONCE).send();
        device.disconnect();
        Mqtt5BlockingClient pub = Clients.alice5(b, "commander");
        // The subscription reaches node b through tbmq.client.session.
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> subscriptions(b) > known);
        for (int i = 0; i < 50; i++) {
            pub.publishWith().topic("cmd/device-7").qos(MqttQos.AT_LEAST_ONCE).payload(("c" + i).getBytes()).send();
        }
        Mqtt5BlockingClient again = Clients.v5(c, "device-7").buildBlocking();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = again.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            Mqtt5ConnAck ack = connectPersistent(again);
            assertThat(ack.isSessionPresent()).as("session found on another node").isTrue();
            List<String> got = new ArrayList<>();
            while (got.size() < 50) {
                Optional<Mqtt5Publish> p = in.receive(10, TimeUnit.SECONDS);
                assertThat(p).as("after %s", got).isPresent();
                got.add(Clients.text(p.get().getPayloadAsBytes()));
            }
            assertThat(got).containsExactlyElementsOf(
                    java.util.stream.IntStream.range(0, 50).mapToObj(i -> "c" + i).toList());
            // Live messages follow the client to its new node.
            pub.publishWith().topic("cmd/device-7").qos(MqttQos.AT_LEAST_ONCE).payload("live".getBytes()).send();
            assertThat(in.receive(10, TimeUnit.SECONDS).map(p -> Clients.text(p.getPayloadAsBytes()))).contains("live");
        }
        again.disconnect();
        pub.disconnect();
    }

    @Test
    @Order(4)
    void aClientConnectingToAnotherNodeTakesItsSessionOver() throws Exception {
        CompletableFuture<String> kicked = new CompletableFuture<>();
        var first = Clients.v5(a, "roamer").addDisconnectedListener(ctx -> kicked.complete(
                ctx.getCause() instanceof Mqtt5DisconnectException e ? e.getMqttMessage().getReasonCode().name()
                        : ctx.getCause().toString())).buildBlocking();
        connectPersistent(first);
        first.subscribeWith().topicFilter("roam/in").qos(MqttQos.AT_LEAST_ONCE).send();
        Thread.sleep(500);
        Mqtt5BlockingClient second = Clients.v5(b, "roamer").buildBlocking();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = second.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            assertThat(connectPersistent(second).isSessionPresent()).isTrue();
            assertThat(kicked.get(10, TimeUnit.SECONDS)).as("old connection told why").contains("SESSION_TAKEN_OVER");
            Mqtt5BlockingClient pub = Clients.alice5(c, "roam-pub");
            pub.publishWith().topic("roam/in").qos(MqttQos.AT_LEAST_ONCE).payload("after".getBytes()).send();
            assertThat(in.receive(10, TimeUnit.SECONDS).map(p -> Clients.text(p.getPayloadAsBytes())))
                    .as("the subscription moved with the session").contains("after");
            pub.disconnect();
        }
        second.disconnect();
    }

    @Test
    @Order(5)
    void willIsPublishedWhenTheClientsNodeIsKilled() throws Exception {
        Mqtt5BlockingClient watcher = Clients.alice5(a, "watcher");
        watcher.subscribeWith().topicFilter("status/+").qos(MqttQos.AT_LEAST_ONCE).send();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = watcher.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            Mqtt5BlockingClient doomed = Clients.v5(c, "doomed").buildBlocking();
            doomed.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                    .applySimpleAuth().willPublish().topic("status/doomed").qos(MqttQos.AT_LEAST_ONCE)
                    .payload("offline".getBytes()).applyWillPublish().send();
            Thread.sleep(1_000);
            long killed = System.nanoTime();
            c.kill();
            Optional<Mqtt5Publish> will = in.receive(30, TimeUnit.SECONDS);
            assertThat(will.map(p -> Clients.text(p.getPayloadAsBytes()))).as("Will of a client whose node died").contains("offline");
            System.out.printf("Will delivered %d ms after kill -9 of its node%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
        }
        watcher.disconnect();
    }

    @Test
    @Order(6)
    void aDrainingNodeSendsItsClientsToTheServerReferenceWithTheirSessions() throws Exception {
        Map<String, String> config = new java.util.HashMap<>(CLUSTER);
        String reference = "127.0.0.1:" + a.mqttPort();
        config.put("tbmq.shutdown.server-reference", reference);
        BrokerNode d = it.startBroker("node-d", config);
        CompletableFuture<Mqtt5DisconnectException> told = new CompletableFuture<>();
        Mqtt5BlockingClient device = Clients.v5(d, "drained").addDisconnectedListener(ctx -> {
            if (ctx.getCause() instanceof Mqtt5DisconnectException e) {
                told.complete(e);
            }
        }).buildBlocking();
        connectPersistent(device);
        device.subscribeWith().topicFilter("drain/in").qos(MqttQos.AT_LEAST_ONCE).send();
        d.stop(java.time.Duration.ofSeconds(30));

        Mqtt5DisconnectException e = told.get(10, TimeUnit.SECONDS);
        assertThat(e.getMqttMessage().getReasonCode())
                .isEqualTo(com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode.USE_ANOTHER_SERVER);
        assertThat(e.getMqttMessage().getServerReference().map(Object::toString)).contains(reference);
        assertThat(d.process().exitCode()).as("clean exit on SIGTERM").isIn(0, 143);

        // Messages published while the device moves wait in its session; it finds them at the reference.
        Mqtt5BlockingClient pub = Clients.alice5(b, "drain-pub");
        for (int i = 0; i < 5; i++) {
            pub.publishWith().topic("drain/in").qos(MqttQos.AT_LEAST_ONCE).payload(("d" + i).getBytes()).send();
        }
        int port = Integer.parseInt(e.getMqttMessage().getServerReference().orElseThrow().toString().split(":")[1]);
        Mqtt5BlockingClient moved = com.hivemq.client.mqtt.MqttClient.builder().useMqttVersion5().identifier("drained")
                .serverHost("127.0.0.1").serverPort(port).buildBlocking();
        try (Mqtt5BlockingClient.Mqtt5Publishes in = moved.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            assertThat(connectPersistent(moved).isSessionPresent()).as("the session outlived its node").isTrue();
            List<String> got = new ArrayList<>();
            while (got.size() < 5) {
                Optional<Mqtt5Publish> p = in.receive(10, TimeUnit.SECONDS);
                assertThat(p).as("after %s", got).isPresent();
                got.add(Clients.text(p.get().getPayloadAsBytes()));
            }
            assertThat(got).containsExactly("d0", "d1", "d2", "d3", "d4");
        }
        moved.disconnect();
        pub.disconnect();
    }

    @Test
    @Order(7)
    void theDownlinkTopicsOfANodeGoneForGoodAreDeleted() throws Exception {
        // node-d drained and left in the previous test (a scale-down); node-c was killed before that.
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", it.stack().kafka().bootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(props)) {
            Awaitility.await().atMost(90, TimeUnit.SECONDS).pollInterval(1, TimeUnit.SECONDS).until(() -> admin.listTopics().names()
                    .get().stream().noneMatch(t -> t.endsWith(".node-d")));
            assertThat(admin.listTopics().names().get()).as("the live nodes keep theirs")
                    .contains("tbmq.msg.downlink.basic.node-it", "tbmq.msg.downlink.persisted.node-b");
        }
    }

    /**
     * A node sends heartbeats from the moment it claims its id, saying it is starting until it has read
     * its sessions: the others count it alive (they leave its sessions to it, however long its start
     * takes) but do not take it for the caretaker, which would hold up the Wills of a dead node's clients.
     */
    @Test
    @Order(8)
    void aStartingNodeWithTheLowestIdDoesNotHoldUpTheWillsOfAKilledNodesClients() throws Exception {
        BrokerNode e = it.startBroker("node-e", CLUSTER);
        Awaitility.await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            List<String> heartbeats = heartbeatsOf("node-e");
            assertThat(heartbeats).as("node-e's heartbeats").isNotEmpty();
            assertThat(heartbeats.getFirst()).as("the first of %s", heartbeats).contains(" phase starting")
                    .endsWith(" cluster " + ItStack.CLUSTER);
            assertThat(heartbeats.getLast()).as("the last of %s, once node-e started", heartbeats).doesNotContain("phase");
        });

        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", it.stack().kafka().bootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(props)) {
            // A starting node creates its downlink topics before its first heartbeat.
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("tbmq.msg.downlink.basic.node-a", 1, (short) 1),
                    new org.apache.kafka.clients.admin.NewTopic("tbmq.msg.downlink.persisted.node-a", 1, (short) 1))).all().get();
        }
        java.util.concurrent.atomic.AtomicBoolean starting = new java.util.concurrent.atomic.AtomicBoolean(true);
        Mqtt5BlockingClient watcher = Clients.alice5(a, "starting-watcher");
        watcher.subscribeWith().topicFilter("status/+").qos(MqttQos.AT_LEAST_ONCE).send();
        try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> producer = new org.apache.kafka.clients.producer.KafkaProducer<>(
                props, new org.apache.kafka.common.serialization.ByteArraySerializer(), new org.apache.kafka.common.serialization.ByteArraySerializer());
                Mqtt5BlockingClient.Mqtt5Publishes in = watcher.publishes(com.hivemq.client.mqtt.MqttGlobalPublishFilter.ALL)) {
            // node-a, the lowest id, as a broker whose start goes on for longer than the node timeout.
            Thread fake = Thread.ofPlatform().daemon().start(() -> {
                while (starting.get()) {
                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("tbmq.cluster.nodes",
                            "node-a".getBytes(StandardCharsets.UTF_8),
                            (System.currentTimeMillis() + " incarnation 0a0a0a0a phase starting").getBytes(StandardCharsets.UTF_8)));
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException stop) {
                        return;
                    }
                }
            });
            try {
                Thread.sleep(2_000);
                Mqtt5BlockingClient doomed = Clients.v5(e, "doomed-e").buildBlocking();
                doomed.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                        .applySimpleAuth().willPublish().topic("status/doomed-e").qos(MqttQos.AT_LEAST_ONCE)
                        .payload("offline".getBytes()).applyWillPublish().send();
                Thread.sleep(1_000);
                e.kill();
                Optional<Mqtt5Publish> will = in.receive(30, TimeUnit.SECONDS);
                assertThat(will.map(p -> Clients.text(p.getPayloadAsBytes())))
                        .as("Will of a client whose node died while node-a, the lowest id, was starting").contains("offline");
                assertThat(in.receive(2, TimeUnit.SECONDS)).as("the Will once").isEmpty();
            } finally {
                starting.set(false);
                fake.join();
            }
        }
        watcher.disconnect();
    }

    /** The heartbeats in tbmq.cluster.nodes with key {@code node}, oldest first. */
    private static List<String> heartbeatsOf(String node) {
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", it.stack().kafka().bootstrapServers());
        List<String> out = new ArrayList<>();
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(
                props, new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            org.apache.kafka.common.TopicPartition nodes = new org.apache.kafka.common.TopicPartition("tbmq.cluster.nodes", 0);
            consumer.assign(List.of(nodes));
            consumer.seekToBeginning(List.of(nodes));
            long end = consumer.endOffsets(List.of(nodes)).get(nodes);
            while (consumer.position(nodes) < end) {
                for (var r : consumer.poll(java.time.Duration.ofSeconds(1))) {
                    if (new String(r.key(), StandardCharsets.UTF_8).equals(node) && r.value() != null) {
                        out.add(new String(r.value(), StandardCharsets.UTF_8));
                    }
                }
            }
        }
        return out;
    }

    private static Mqtt5ConnAck connectPersistent(Mqtt5BlockingClient client) {
        return client.connectWith().cleanStart(false).sessionExpiryInterval(600).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
    }

    /** Subscriptions reach the other nodes through Kafka: wait until a probe on {@code node} arrives. */
    private static void awaitVisible(BrokerNode node, String topic, Mqtt5BlockingClient.Mqtt5Publishes in) throws Exception {
        Mqtt5BlockingClient probe = Clients.alice5(node, "probe-" + System.nanoTime());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            probe.publishWith().topic(topic).qos(MqttQos.AT_MOST_ONCE).payload("probe".getBytes()).send();
            Optional<Mqtt5Publish> p = in.receive(200, TimeUnit.MILLISECONDS);
            if (p.isPresent()) {
                // Drain probes still on their way.
                while (in.receive(300, TimeUnit.MILLISECONDS).isPresent()) {
                }
                probe.disconnect();
                return;
            }
        }
        throw new AssertionError("subscription never became visible on " + node.nodeId());
    }

    /** The node's subscription trie size (its own clients' and every other node's). */
    private static double subscriptions(BrokerNode node) {
        for (String line : node.get("/q/metrics").split("\n")) {
            if (line.startsWith("tbmq_subscriptions ")) {
                return Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        return 0;
    }
}
