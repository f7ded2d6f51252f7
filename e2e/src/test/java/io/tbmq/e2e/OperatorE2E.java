package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.tbmq.localstack.RedisNode;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.redis.ClusterNodesParser;
import io.tbmq.operator.redis.NodeState;
import io.tbmq.operator.redis.RedisEndpoints;

/**
 * The operator on a real Kubernetes control plane, with real redis-server processes standing behind
 * the Redis pods (kwok runs no containers) and a stand-in for Strimzi's Kafka readiness. One
 * TbmqCluster goes through a user's life: apply, scale up, scale down, a bad edit, delete.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorE2E {
    static final String NS = "iot"; // the namespace docs/install.md uses
    /** A namespace no Strimzi operator watches (the stand-in watches only NS, as Strimzi's default install its own). */
    static final String UNWATCHED = "edge";
    static final Duration STRIMZI_STATUS_TIMEOUT = Duration.ofSeconds(15);
    static final String NAME = "p2p-200k";
    static final Duration TIMEOUT = Duration.ofSeconds(120);
    static final int REDIS_PODS = 9; // 800k msg/s needs 9 masters (Table 4)

    static Path repo;
    static ControlPlane plane;
    static KubernetesClient client;
    static io.tbmq.standin.StrimziStandIn strimzi;
    static InProcessOperator operator;
    static final List<RedisNode> redis = new ArrayList<>();
    static RedisEndpoints endpoints;
    static KubernetesClient operatorClient;
    /** Every request the operator made to the API server, "METHOD path?query". */
    static final java.util.Queue<String> operatorRequests = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @BeforeAll
    static void start() throws Exception {
        repo = Path.of(System.getProperty("tbmq.repo", "..")).toAbsolutePath().normalize();
        Path work = Files.createDirectories(repo.resolve("e2e/target/e2e-" + System.currentTimeMillis()));
        plane = ControlPlane.start(repo, work, 4);
        client = plane.client();
        // Installed the way users install it: the CRD, namespace, ServiceAccount, RBAC and Deployment.
        System.out.println(plane.make(repo, "deploy"));
        StrimziCrds.install(client);
        await("CRDs established", () -> client.apiextensions().v1().customResourceDefinitions().list().getItems().stream()
                .filter(c -> c.getStatus() != null && c.getStatus().getConditions().stream()
                        .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())))
                .count() == 2 + StrimziCrds.FILES.size()); // TbmqCluster, TbmqUser and Strimzi's
        // Every pod the operator writes must pass the restricted Pod Security Standard: the API server refuses the rest.
        for (String ns : List.of(NS, UNWATCHED)) {
            client.resource(new NamespaceBuilder().withNewMetadata().withName(ns)
                    .addToLabels("pod-security.kubernetes.io/enforce", "restricted").endMetadata().build()).serverSideApply();
        }
        // docs/install.md's commands, as a user types them.
        Path credentials = work.resolve("credentials.yaml");
        Files.writeString(credentials, "users: []\n");
        kubectl(work, "-n", NS, "create", "secret", "generic", "fleet-users", "--from-file=credentials.yaml");
        for (int i = 0; i < REDIS_PODS; i++) {
            redis.add(RedisNode.unjoinedClusterMember(work.resolve("redis-" + i)).start(Duration.ofSeconds(20)));
        }
        // The seam: Redis pod N of the TbmqCluster is the local redis-server N.
        endpoints = (pod, ordinal) -> new io.tbmq.operator.redis.RedisNode(ordinal, "127.0.0.1", redis.get(ordinal).port());
        strimzi = new io.tbmq.standin.StrimziStandIn(client, NS);
        // The operator acts as its ServiceAccount: every call it makes must be allowed by the generated RBAC.
        operatorClient = plane.clientAs("tbmq-system", "tbmq-operator", operatorRequests);
        operator = operator();
    }

    private static InProcessOperator operator() {
        return new InProcessOperator(operatorClient, java.util.Set.of(NS, UNWATCHED), endpoints,
                io.tbmq.operator.reconciler.TbmqClusterReconciler.Settings.defaults(true).withStrimziStatusTimeout(STRIMZI_STATUS_TIMEOUT));
    }

    @AfterAll
    static void stop() {
        Stream.<AutoCloseable>of(operator, strimzi).forEach(OperatorE2E::quietly);
        redis.forEach(RedisNode::stop);
        quietly(operatorClient);
        quietly(client);
        quietly(plane);
    }

    @Test
    @Order(1)
    void everySampleAndAlmExampleIsAcceptedByTheCrdSchema() throws Exception {
        try (var files = Files.list(repo.resolve("config/samples"))) {
            for (Path sample : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
                var r = Serialization.unmarshal(Files.newInputStream(sample), io.fabric8.kubernetes.api.model.GenericKubernetesResource.class);
                r.getMetadata().setNamespace(NS);
                client.resource(r).dryRun().create();
            }
        }
        // The OLM bundle's alm-examples, as OperatorHub would offer them.
        Map<String, Object> csv = Serialization.unmarshal(Files.newInputStream(
                repo.resolve("bundle/manifests/tbmq-operator.clusterserviceversion.yaml")), Map.class);
        @SuppressWarnings("unchecked")
        String examples = ((Map<String, String>) ((Map<String, Object>) csv.get("metadata")).get("annotations")).get("alm-examples");
        var parsed = Serialization.unmarshal(examples, io.fabric8.kubernetes.api.model.GenericKubernetesResource[].class);
        assertThat(parsed).hasSizeGreaterThanOrEqualTo(6);
        assertThat(java.util.Arrays.stream(parsed).map(r -> r.getKind())).contains("TbmqCluster", "TbmqUser");
        for (var r : parsed) {
            r.getMetadata().setNamespace(NS);
            client.resource(r).dryRun().create();
        }
    }

    @Test
    @Order(1)
    void makeDeployInstalledTheOperatorDeployment() {
        await("operator Deployment available", () -> {
            var d = client.apps().deployments().inNamespace("tbmq-system").withName("tbmq-operator").get();
            return d != null && d.getStatus() != null && Integer.valueOf(1).equals(d.getStatus().getAvailableReplicas());
        });
        var container = client.apps().deployments().inNamespace("tbmq-system").withName("tbmq-operator").get().getSpec()
                .getTemplate().getSpec().getContainers().get(0);
        assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
        assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(client.rbac().clusterRoleBindings().withName("tbmqcluster-cluster-role-binding").get().getSubjects())
                .singleElement().satisfies(s -> assertThat(s.getNamespace()).isEqualTo("tbmq-system"));
    }

    @Test
    @Order(2)
    void aSampleAppliedBecomesReadyWithEveryObject() throws Exception {
        Instant t0 = Instant.now();
        kubectl(repo, "-n", NS, "apply", "-f", "config/samples/tbmq-p2p-200k.yaml");
        TbmqCluster ready = awaitReady(1);
        String table = kubectl(repo, "-n", NS, "get", "tbmq");
        System.out.print(table);
        assertThat(table).contains("TARGET", "BROKERS", "REDIS", "KAFKA", "READY").containsPattern("p2p-200k\\s+.*200000.*1/1.*True");
        System.out.printf("e2e: apply -> Ready in %d ms%n", Duration.between(t0, Instant.now()).toMillis());

        assertThat(client.resources(Kafka.class).inNamespace(NS).withName(NAME + "-kafka").get()).isNotNull();
        assertThat(client.resources(KafkaNodePool.class).inNamespace(NS).withName(NAME + "-kafka-brokers").get().getSpec()
                .getReplicas()).isEqualTo(3);
        assertThat(client.resources(KafkaNodePool.class).inNamespace(NS).withName(NAME + "-kafka-controllers").get().getSpec()
                .getRoles()).containsExactly(io.strimzi.api.kafka.model.nodepool.ProcessRoles.CONTROLLER);
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).list().getItems())
                .allSatisfy(t -> assertThat(t.getMetadata().getFinalizers()).contains(io.tbmq.standin.StrimziStandIn.TOPIC_FINALIZER));
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).list().getItems()).hasSize(5);
        assertThat(sts(NAME + "-redis").getSpec().getReplicas()).isEqualTo(3);
        assertThat(sts(NAME + "-broker").getStatus().getReadyReplicas()).isEqualTo(1);
        assertThat(client.services().inNamespace(NS).withName(NAME + "-broker").get()).isNotNull();
        assertThat(client.policy().v1().podDisruptionBudget().inNamespace(NS).withName(NAME + "-broker").get()).isNotNull();
        assertThat(ready.getStatus().getBrokers()).isEqualTo("1/1");
        assertThat(ready.getStatus().getRedis()).isEqualTo("3/3");
        assertThat(ready.getStatus().getKafka()).isEqualTo("3/3");

        List<NodeState> nodes = observeRedis(3);
        assertThat(nodes).allSatisfy(n -> assertThat(n.known()).hasSize(3));
        assertThat(nodes.stream().mapToInt(NodeState::slotCount).sum()).isEqualTo(16384);
        assertThat(nodes).allSatisfy(n -> assertThat(n.slotCount()).isBetween(5461, 5462));
        // The Redis processes here start without an append-only file, as pods of an older operator did:
        // the operator turns it on at run time, since restarting them with the new redis.conf would start them empty.
        // They start with appendfsync always too: the operator sets the spec's policy (everysec by default) on them.
        assertThat(appendFsyncOfEveryNode()).containsExactly("everysec", "everysec", "everysec");
        for (int i = 0; i < 3; i++) {
            Map<String, String> appendOnly = redisCommand(i, c -> c.configGet("appendonly"));
            assertThat(appendOnly).containsEntry("appendonly", "yes");
        }
        assertThat(eventReasons()).contains("RedisAppendOnly");
        // A new cluster's pods start with a password the operator generated. These processes, standing in for
        // them, do not read the pods' arguments and start open, as a node left taking any client would be:
        // the operator's steady-state check closes every way in but the password in force.
        assertThat(eventReasons()).contains("RedisPasswordGenerated", "RedisPasswordClosed").doesNotContain("RedisPasswordChanged");
        for (int i = 0; i < 3; i++) {
            RedisClient open = RedisClient.create(RedisURI.create("127.0.0.1", redis.get(i).port()));
            try {
                // Refused in the handshake (HELLO, or PING), or at the first command. Lettuce reports about
                // one refused handshake in fifty as "RedisHandshakeHandler not registered", without Redis'
                // answer: asked again, up to three times; one that is served fails at once.
                Throwable refusal = null;
                for (int attempt = 0; attempt < 3; attempt++) {
                    refusal = catchThrowable(() -> {
                        try (StatefulRedisConnection<String, String> conn = open.connect()) {
                            conn.sync().get("k");
                        }
                    });
                    assertThat(refusal).as("redis-%d served a client without a password", i).isNotNull();
                    if (stackTraceOf(refusal).contains("NOAUTH")) {
                        break;
                    }
                    sleep(300);
                }
                assertThat(refusal).as("redis-%d without a password", i).hasStackTraceContaining("NOAUTH");
            } finally {
                open.shutdown();
            }
        }
    }

    @Test
    @Order(3)
    void scalingTo800kGrowsRedisWithSlotsMovedRaisesPartitionsAndRollsBrokersEvenAcrossAnOperatorRestart() {
        String hashBefore = sts(NAME + "-broker").getSpec().getTemplate().getMetadata().getAnnotations().get("tbmq.io/config-hash");
        Instant t0 = Instant.now();
        TbmqCluster c = edit(x -> x.getSpec().setTargetThroughput(800_000));

        // Restart the operator mid-scale: once the Redis StatefulSet has grown, before the cluster is balanced.
        await("Redis StatefulSet grown to 9", () -> sts(NAME + "-redis").getSpec().getReplicas() == 9);
        operator.close();
        operator = operator();

        TbmqCluster ready = awaitReady(c.getMetadata().getGeneration());
        System.out.printf("e2e: 200k -> 800k edit -> Ready in %d ms%n", Duration.between(t0, Instant.now()).toMillis());
        List<NodeState> nodes = observeRedis(9);
        assertThat(nodes).allSatisfy(n -> assertThat(n.known()).hasSize(9));
        assertThat(nodes).allSatisfy(n -> assertThat(n.slotCount()).isBetween(16384 / 9, 16384 / 9 + 1));
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).withName(NAME + "-msg-all").get().getSpec().getPartitions())
                .isEqualTo(16);
        StatefulSet brokers = sts(NAME + "-broker");
        assertThat(brokers.getSpec().getReplicas()).isEqualTo(4);
        assertThat(brokers.getSpec().getTemplate().getMetadata().getAnnotations().get("tbmq.io/config-hash"))
                .as("a scale edit changes live settings only: no broker restarts").isEqualTo(hashBefore);
        assertThat(client.configMaps().inNamespace(NS).withName(NAME + "-broker-live").get().getData().get("live.properties"))
                .contains("tbmq.redis.lettuce-batch-size=400", "tbmq.kafka.msg-all-partitions=16");
        assertThat(ready.getStatus().getBrokers()).isEqualTo("4/4");
        // (RollingBrokers may belong to the operator stopped mid-way, which applied the settings before it went.)
        assertThat(eventReasons()).contains("ScalingBrokers", "ScalingRedis", "RedisNodesJoined", "RedisSlotsMoved",
                "PartitionsRaised");
        // The Meet is retried every 250 ms until gossip settles: one Event, counted, not one per retry.
        // Two operators ran here, and each writes an Event before the write it announces: the second
        // writes one again for a write the first was stopped before finishing (BrokerProvisioner), so
        // an Event may exist once per operator run, never once per retry.
        Map<String, Long> repeated = client.v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> e.getSource() != null && "tbmq-operator".equals(e.getSource().getComponent()))
                .collect(java.util.stream.Collectors.groupingBy(e -> e.getReason() + ": " + e.getMessage(),
                        java.util.stream.Collectors.counting()));
        assertThat(repeated).allSatisfy((what, events) -> assertThat(events).as(what).isBetween(1L, 2L));
        // Partitions and batch size are live settings: the scale did not roll the brokers.
        assertThat(eventReasons()).contains("BrokerSettingsApplied");
        // Dozens of reconciles, an operator restart: the StatefulSets and pods it watches were read from its informers.
        assertThat(operatorRequests).as("the operator's requests").isNotEmpty();
        assertThat(operatorRequests).filteredOn(r -> r.matches("GET /apis/apps/v1/namespaces/[^/]+/statefulsets/[^/?]+(\\?.*)?")
                || r.matches("GET /api/v1/namespaces/[^/]+/pods/[^/?]+(\\?.*)?")
                || r.matches("GET /api/v1/(namespaces/[^/]+/)?pods\\?.*") && !r.contains("managed-by"))
                .as("live reads of watched objects instead of the informer caches").isEmpty();
    }

    @Test
    @Order(4)
    void scalingBackTo200kMovesSlotsOffBeforeShrinkingAndKeepsEveryKey() {
        Map<String, String> written = new HashMap<>();
        RedisClusterClient cluster = RedisClusterClient.create(redisUri(0));
        try (StatefulRedisClusterConnection<String, String> conn = cluster.connect()) {
            for (int i = 0; i < 2000; i++) {
                written.put("{device-" + i + "}:msg", "payload-" + i);
            }
            written.forEach((k, v) -> conn.sync().set(k, v));
        }

        TbmqCluster c = edit(x -> x.getSpec().setTargetThroughput(200_000));
        TbmqCluster ready = awaitReady(c.getMetadata().getGeneration());
        assertThat(sts(NAME + "-redis").getSpec().getReplicas()).isEqualTo(3);
        List<NodeState> nodes = observeRedis(3);
        assertThat(nodes).allSatisfy(n -> assertThat(n.known()).hasSize(3));
        assertThat(nodes.stream().mapToInt(NodeState::slotCount).sum()).isEqualTo(16384);
        for (int i = 3; i < REDIS_PODS; i++) {
            NodeState removed = observe(i);
            assertThat(removed.isAlone()).as("redis-" + i + " was drained, forgotten and reset").isTrue();
        }
        // The topology the client learnt before the change is stale now: it asks the cluster again.
        cluster.refreshPartitions();
        try (StatefulRedisClusterConnection<String, String> conn = cluster.connect()) {
            assertThat(conn.getPartitions()).hasSize(3);
            written.forEach((k, v) -> assertThat(conn.sync().get(k)).as(k).isEqualTo(v));
        } finally {
            cluster.shutdown();
        }
        Condition kept = condition(ready, "PartitionsKept");
        assertThat(kept.getStatus()).as("partitions only grow").isEqualTo("True");
        assertThat(client.resources(KafkaTopic.class).inNamespace(NS).withName(NAME + "-msg-all").get().getSpec().getPartitions())
                .isEqualTo(16);
        assertThat(sts(NAME + "-broker").getSpec().getReplicas()).isEqualTo(1);
        assertThat(eventReasons()).contains("RedisNodeRemoved", "BrokerSettingsApplied").doesNotContain("RollingBrokers");
    }

    @Test
    @Order(5)
    void aRedisResourcesEditReplacesOnePodAtATime() {
        java.util.Set<String> down = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicInteger mostDown = new java.util.concurrent.atomic.AtomicInteger();
        java.util.function.Consumer<Pod> seen = pod -> {
            boolean ready = pod.getMetadata().getDeletionTimestamp() == null && pod.getStatus() != null
                    && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                            .anyMatch(x -> "Ready".equals(x.getType()) && "True".equals(x.getStatus()));
            if (ready) {
                down.remove(pod.getMetadata().getName());
            } else {
                down.add(pod.getMetadata().getName());
            }
            mostDown.accumulateAndGet(down.size(), Math::max);
        };
        try (io.fabric8.kubernetes.client.Watch watch = client.pods().inNamespace(NS)
                .withLabel("app.kubernetes.io/instance", NAME).withLabel("app.kubernetes.io/component", "redis")
                .watch(new io.fabric8.kubernetes.client.Watcher<Pod>() {
                    @Override
                    public void eventReceived(Action action, Pod pod) {
                        if (action == Action.DELETED) {
                            down.add(pod.getMetadata().getName());
                            mostDown.accumulateAndGet(down.size(), Math::max);
                        } else {
                            seen.accept(pod);
                        }
                    }

                    @Override
                    public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
                    }
                })) {
            TbmqCluster c = edit(x -> x.getSpec().getRedis().setResources(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
                    .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("150m"))
                    .addToRequests("memory", new io.fabric8.kubernetes.api.model.Quantity("300Mi"))
                    .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("600Mi")).build()));
            awaitReady(c.getMetadata().getGeneration());
            String revision = sts(NAME + "-redis").getStatus().getUpdateRevision();
            await("every Redis pod made from the new spec", () -> client.pods().inNamespace(NS)
                    .withLabel("app.kubernetes.io/instance", NAME).withLabel("app.kubernetes.io/component", "redis").list().getItems()
                    .stream().filter(p -> revision.equals(p.getMetadata().getLabels().get("controller-revision-hash"))).count() == 3);
        }
        assertThat(client.v1().events().inNamespace(NS).list().getItems().stream().filter(e -> "RedisPodReplaced".equals(e.getReason()))
                .map(e -> e.getMessage().split(" ")[0]).distinct().toList()).as("each pod replaced once")
                .containsExactlyInAnyOrder(NAME + "-redis-0", NAME + "-redis-1", NAME + "-redis-2");
        assertThat(mostDown.get()).as("Redis pods down at the same time (a master's slots are unserved while it is)").isEqualTo(1);
        assertThat(observeRedis(3).stream().mapToInt(NodeState::slotCount).sum()).isEqualTo(16384);
    }

    @Test
    @Order(6)
    void anFsyncEditReachesTheRunningRedisNodesWithoutARestart() {
        java.util.Set<String> pods = redisPodUids();
        TbmqCluster c = edit(x -> x.getSpec().getRedis().setFsync(io.tbmq.operator.api.Fsync.ALWAYS));
        await("appendfsync always on every Redis node", () -> appendFsyncOfEveryNode().equals(List.of("always", "always", "always")));
        awaitReady(c.getMetadata().getGeneration());
        assertThat(client.configMaps().inNamespace(NS).withName(NAME + "-redis").get().getData().get("redis.conf"))
                .as("what a node restarted later starts with").contains("appendfsync always");
        assertThat(client.v1().events().inNamespace(NS).list().getItems()).as("the edit's event")
                .anySatisfy(e -> assertThat(e.getMessage()).contains("(appendfsync always)"));
        assertThat(redisPodUids()).as("no Redis pod replaced").isEqualTo(pods);

        c = edit(x -> x.getSpec().getRedis().setFsync(io.tbmq.operator.api.Fsync.EVERYSEC));
        await("appendfsync everysec again", () -> appendFsyncOfEveryNode().equals(List.of("everysec", "everysec", "everysec")));
        awaitReady(c.getMetadata().getGeneration());
    }

    @Test
    @Order(7)
    void aRedisMasterNearlyFullIsNamedInTheStatusAndNothingElseChanges() {
        String before = redisCommand(1, r -> r.configGet("maxmemory")).get("maxmemory");
        long used = Long.parseLong(redisCommand(1, r -> r.info("memory")).lines().filter(l -> l.startsWith("used_memory:"))
                .findFirst().orElseThrow().substring("used_memory:".length()).strip());
        // At what it uses now: over 80 % whatever a connection adds or takes (noeviction evicts nothing).
        redisCommand(1, r -> r.configSet("maxmemory", Long.toString(used)));
        try {
            // A ready cluster is looked at every 30 s.
            await("RedisMemoryHigh naming redis-1", () -> condition(get(), "RedisMemoryHigh").getMessage().startsWith("redis-1 uses "),
                    Duration.ofSeconds(90));
            TbmqCluster c = get();
            assertThat(condition(c, "RedisMemoryHigh").getStatus()).isEqualTo("True");
            assertThat(condition(c, "RedisMemoryHigh").getMessage()).as("only the nearly full master")
                    .contains("of its maxmemory of ", "spec.overrides.redisMasters").doesNotContain("redis-0", "redis-2");
            assertThat(condition(c, "Ready").getStatus()).as("a notice, nothing fails").isEqualTo("True");
        } finally {
            redisCommand(1, r -> r.configSet("maxmemory", before));
        }
        await("RedisMemoryHigh gone once redis-1 has room", () -> condition(get(), "RedisMemoryHigh") == null, Duration.ofSeconds(90));
    }

    private static List<String> appendFsyncOfEveryNode() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            out.add(redisCommand(i, r -> r.configGet("appendfsync")).get("appendfsync"));
        }
        return out;
    }

    private static java.util.Set<String> redisPodUids() {
        return client.pods().inNamespace(NS).withLabel("app.kubernetes.io/instance", NAME)
                .withLabel("app.kubernetes.io/component", "redis").list().getItems().stream()
                .map(p -> p.getMetadata().getUid()).collect(java.util.stream.Collectors.toSet());
    }

    @Test
    @Order(8)
    void anInvalidEditIsDegradedNamingTheFieldAndTearsNothingDown() throws Exception {
        // The CRD's schema refuses it at the API server, naming the field, as kubectl shows it.
        String refused = kubectlOutcome(repo, false, "-n", NS, "patch", "tbmq", NAME, "--type", "merge", "-p",
                "{\"spec\":{\"broker\":{\"persistence\":{\"deviceMessagesLimit\":100000}}}}");
        assertThat(refused).contains("deviceMessagesLimit", "65535");

        TbmqCluster c = edit(x -> x.getSpec().getBroker().getListeners().getMqtts().setEnabled(true));
        await("Degraded naming the field", () -> {
            Condition d = condition(get(), "Degraded");
            return d != null && "True".equals(d.getStatus()) && d.getObservedGeneration() == c.getMetadata().getGeneration();
        });
        assertThat(condition(get(), "Degraded").getMessage()).contains("spec.broker.tlsSecret");
        assertThat(sts(NAME + "-broker").getSpec().getReplicas()).isEqualTo(1);
        assertThat(sts(NAME + "-redis").getSpec().getReplicas()).isEqualTo(3);

        TbmqCluster fixed = edit(x -> x.getSpec().getBroker().getListeners().getMqtts().setEnabled(false));
        awaitReady(fixed.getMetadata().getGeneration());
    }

    @Test
    @Order(9)
    void storageEditsKubernetesCannotApplyAreRefusedOrReportedAndBlockNothingElse() throws Exception {
        // Refused at admission by the CRD's transition rules, naming the field.
        String shrink = kubectlOutcome(repo, false, "-n", NS, "patch", "tbmq", NAME, "--type", "merge", "-p",
                "{\"spec\":{\"redis\":{\"storage\":{\"size\":\"4Gi\"}}}}");
        assertThat(shrink).contains("spec.redis.storage.size", "can only grow");
        String otherClass = kubectlOutcome(repo, false, "-n", NS, "patch", "tbmq", NAME, "--type", "merge", "-p",
                "{\"spec\":{\"kafka\":{\"storage\":{\"storageClass\":\"fast\"}}}}");
        assertThat(otherClass).contains("spec.kafka.storage.storageClass", "cannot change");
        String httpPort = kubectlOutcome(repo, false, "-n", NS, "patch", "tbmq", NAME, "--type", "merge", "-p",
                "{\"spec\":{\"broker\":{\"listeners\":{\"ws\":{\"enabled\":true,\"port\":8080}}}}}");
        assertThat(httpPort).contains("spec.broker.listeners.ws.port", "8080 is the broker's HTTP port");

        // A storage block added where there was none has nothing for those rules to compare with. Another Redis class
        // would be refused by the StatefulSet on every pass: the volumes keep theirs, a condition says so, and the
        // broker change made with it still applies.
        kubectlOutcome(repo, true, "-n", NS, "patch", "tbmq", NAME, "--type", "json", "-p",
                "[{\"op\":\"remove\",\"path\":\"/spec/redis/storage\"}]");
        kubectlOutcome(repo, true, "-n", NS, "patch", "tbmq", NAME, "--type", "merge", "-p",
                "{\"spec\":{\"redis\":{\"storage\":{\"storageClass\":\"fast\"}},\"broker\":{\"config\":{\"tbmq.mqtt.max-keep-alive\":\"90\"}}}}");
        TbmqCluster classKept = awaitReady(get().getMetadata().getGeneration());
        assertThat(condition(classKept, "RedisStorageClassKept").getMessage()).contains("spec.redis.storage.storageClass 'fast'",
                "(the cluster's default)");
        assertThat(condition(classKept, "Degraded").getStatus()).isEqualTo("False");
        assertThat(client.configMaps().inNamespace(NS).withName(NAME + "-broker-config").get().getData())
                .containsEntry("TBMQ_MQTT_MAX_KEEP_ALIVE", "90");
        assertThat(sts(NAME + "-redis").getSpec().getVolumeClaimTemplates().get(0).getSpec().getStorageClassName()).isNull();
        kubectlOutcome(repo, true, "-n", NS, "patch", "tbmq", NAME, "--type", "json", "-p",
                "[{\"op\":\"remove\",\"path\":\"/spec/redis/storage\"}]");
        await("RedisStorageClassKept gone once the class is", () -> condition(get(), "RedisStorageClassKept") == null);

        // A larger size the cluster's default StorageClass cannot expand: reported, and the broker change made with it still applies.
        assertThat(client.storage().v1().storageClasses().list().getItems()).filteredOn(sc -> sc.getMetadata().getAnnotations() != null
                && "true".equals(sc.getMetadata().getAnnotations().get("storageclass.kubernetes.io/is-default-class")))
                .singleElement().satisfies(sc -> assertThat(sc.getAllowVolumeExpansion()).isNotEqualTo(Boolean.TRUE));
        TbmqCluster c = edit(x -> {
            x.getSpec().getRedis().getStorage().setSize("16Gi");
            x.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-keep-alive", "120");
        });
        TbmqCluster ready = awaitReady(c.getMetadata().getGeneration());
        assertThat(condition(ready, "RedisStorageNotExpanded").getMessage()).contains("spec.redis.storage.size", "16Gi",
                "does not allow volume expansion");
        assertThat(client.configMaps().inNamespace(NS).withName(NAME + "-broker-config").get().getData())
                .containsEntry("TBMQ_MQTT_MAX_KEEP_ALIVE", "120");
        assertThat(sts(NAME + "-redis").getSpec().getVolumeClaimTemplates().get(0).getSpec().getResources().getRequests()
                .get("storage").toString()).isEqualTo("8Gi");

        // Where the StorageClass expands volumes, the Redis StatefulSet is deleted (its pods orphaned) and written again
        // with the new size: the 16Gi asked for above is applied once the class allows it, with no edit.
        String standard = client.storage().v1().storageClasses().list().getItems().stream()
                .filter(sc -> sc.getMetadata().getAnnotations() != null
                        && "true".equals(sc.getMetadata().getAnnotations().get("storageclass.kubernetes.io/is-default-class")))
                .findFirst().orElseThrow().getMetadata().getName();
        expandable(standard, true);
        try {
            await("the volumes expanded to 16Gi", () -> "16Gi".equals(redisVolumeSize()) && get().getStatus() != null
                    && condition(get(), "RedisStorageNotExpanded") == null);
            assertThat(client.persistentVolumeClaims().inNamespace(NS).withName("data-" + NAME + "-redis-0").get().getSpec()
                    .getResources().getRequests().get("storage").toString()).isEqualTo("16Gi");
            assertThat(eventReasons()).contains("RedisStorageExpanded");
            awaitReady(get().getMetadata().getGeneration());

            // Something else in the next such edit that the API server refuses (a resource name Kubernetes does not know)
            // is found by a dry run before the StatefulSet is deleted: the Redis part of the edit is not applied, the
            // cluster says so, the StatefulSet is still there, and the broker setting made with it is applied all the same.
            String redisDigest = sts(NAME + "-redis").getMetadata().getAnnotations().get("tbmq.io/pod-template-digest");
            assertThat(redisDigest).isNotBlank();
            TbmqCluster refused = edit(x -> {
                x.getSpec().getRedis().getStorage().setSize("32Gi");
                x.getSpec().getRedis().getResources().getLimits().put("gpu", new io.fabric8.kubernetes.api.model.Quantity("1"));
                x.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-keep-alive", "180");
            });
            await("the refused write reported", () -> {
                Condition redis = condition(get(), "RedisReady");
                return redis != null && "PodsRefused".equals(redis.getReason())
                        && redis.getObservedGeneration() == refused.getMetadata().getGeneration();
            });
            TbmqCluster reported = get();
            assertThat(condition(reported, "RedisReady").getStatus()).isEqualTo("False");
            assertThat(condition(reported, "RedisReady").getMessage()).contains("gpu");
            assertThat(condition(reported, "Ready").getStatus()).isEqualTo("False");
            assertThat(condition(reported, "Degraded")).satisfies(d -> {
                assertThat(d.getStatus()).isEqualTo("True");
                assertThat(d.getReason()).isEqualTo("PodsRefused");
                assertThat(d.getMessage()).contains("gpu");
            });
            assertThat(sts(NAME + "-redis")).as("the Redis StatefulSet, still there").isNotNull();
            assertThat(sts(NAME + "-redis").getMetadata().getAnnotations()).containsEntry("tbmq.io/pod-template-digest", redisDigest);
            assertThat(redisVolumeSize()).isEqualTo("16Gi");
            await("the broker setting of the same edit applied", () -> "180".equals(client.configMaps().inNamespace(NS)
                    .withName(NAME + "-broker-config").get().getData().get("TBMQ_MQTT_MAX_KEEP_ALIVE")));

            TbmqCluster fixed = edit(x -> x.getSpec().getRedis().getResources().getLimits().remove("gpu"));
            awaitReady(fixed.getMetadata().getGeneration());
            await("the volumes expanded to 32Gi", () -> "32Gi".equals(redisVolumeSize()));
            aPolicyAddedLaterStopsOnlyAChangeItRefuses();
        } finally {
            expandable(standard, false);
        }
    }

    /**
     * A LimitRange added later that the running Redis pods break (their memory limit is twice their request) stops
     * nothing while their template stays as it is, after an operator restart too (the StatefulSet carries its
     * template's digest), a volume expansion included, which deletes the StatefulSet around its pods and writes it
     * again; a change of that template is refused quoting the LimitRange's rule, the running cluster still looked after
     * meanwhile, and the change applied with no edit once the LimitRange is gone.
     */
    private static void aPolicyAddedLaterStopsOnlyAChangeItRefuses() {
        var limits = new io.fabric8.kubernetes.api.model.LimitRangeBuilder().withNewMetadata().withName("memory-ratio")
                .withNamespace(NS).endMetadata().withNewSpec().addNewLimit().withType("Container")
                .addToMaxLimitRequestRatio("memory", new io.fabric8.kubernetes.api.model.Quantity("1500m")).endLimit().endSpec().build();
        client.resource(limits).create();
        TbmqCluster redisEdit;
        try {
            operator.close();
            operator = operator();
            TbmqCluster unrelated = edit(x -> x.getSpec().getBroker().getConfig().put("tbmq.mqtt.max-keep-alive", "200"));
            TbmqCluster ready = awaitReady(unrelated.getMetadata().getGeneration());
            assertThat(condition(ready, "RedisReady").getReason()).isEqualTo("ClusterReady");

            TbmqCluster larger = edit(x -> x.getSpec().getRedis().getStorage().setSize("48Gi"));
            await("the volumes expanded to 48Gi", () -> "48Gi".equals(redisVolumeSize()));
            awaitReady(larger.getMetadata().getGeneration());
            assertThat(client.persistentVolumeClaims().inNamespace(NS).withName("data-" + NAME + "-redis-2").get().getSpec()
                    .getResources().getRequests().get("storage").toString()).isEqualTo("48Gi");

            redisEdit = edit(x -> x.getSpec().getRedis().getResources().getRequests().put("cpu",
                    new io.fabric8.kubernetes.api.model.Quantity("160m")));
            long generation = redisEdit.getMetadata().getGeneration();
            await("the Redis change refused, quoting the LimitRange's rule, and nothing else waiting", () -> {
                TbmqCluster c = get();
                Condition redis = condition(c, "RedisReady");
                Condition progressing = condition(c, "Progressing");
                return redis != null && "PodsRefused".equals(redis.getReason()) && redis.getObservedGeneration() == generation
                        && progressing != null && "False".equals(progressing.getStatus()) && "PodsRefused".equals(progressing.getReason());
            });
            assertThat(condition(get(), "Degraded").getMessage()).contains("memory max limit to request ratio per Container");
            assertThat(sts(NAME + "-redis").getSpec().getTemplate().getSpec().getContainers().get(0).getResources().getRequests()
                    .get("cpu").toString()).isEqualTo("150m");
            // The running cluster is still looked after: a node whose append-only file was turned off gets it back.
            redisCommand(1, r -> r.configSet("appendonly", "no"));
            await("the append-only file of redis-1 turned on again while the change is refused",
                    () -> "yes".equals(redisCommand(1, r -> r.configGet("appendonly")).get("appendonly")), Duration.ofSeconds(90));
            assertThat(condition(get(), "RedisReady").getReason()).isEqualTo("PodsRefused");
        } finally {
            client.resource(limits).delete();
        }
        // The check is made again every 30 s: a LimitRange removed announces nothing.
        await("the Redis change written once the LimitRange is gone", () -> "160m".equals(sts(NAME + "-redis").getSpec().getTemplate()
                .getSpec().getContainers().get(0).getResources().getRequests().get("cpu").toString()), Duration.ofSeconds(90));
        awaitReady(redisEdit.getMetadata().getGeneration());
    }

    private static String redisVolumeSize() {
        StatefulSet redis = sts(NAME + "-redis");
        return redis == null ? null
                : redis.getSpec().getVolumeClaimTemplates().get(0).getSpec().getResources().getRequests().get("storage").toString();
    }

    private static void expandable(String storageClass, boolean expands) {
        client.storage().v1().storageClasses().withName(storageClass).edit(sc -> {
            sc.setAllowVolumeExpansion(expands ? Boolean.TRUE : null);
            return sc;
        });
    }

    @Test
    @Order(10)
    void monitoringMakesAPodMonitorAndAlertsWhereThePrometheusOperatorIsInstalledAndSaysSoWhereItIsNot() throws Exception {
        // No Prometheus Operator: a condition of its own says so, and the cluster stays Ready.
        TbmqCluster on = edit(x -> x.getSpec().getMonitoring().setEnabled(true));
        TbmqCluster ready = awaitReady(on.getMetadata().getGeneration());
        assertThat(condition(ready, "MonitoringReady").getStatus()).isEqualTo("False");
        assertThat(condition(ready, "MonitoringReady").getReason()).isEqualTo("PrometheusOperatorNotInstalled");
        assertThat(condition(ready, "MonitoringReady").getMessage()).contains("monitoring.coreos.com/v1", "spec.monitoring.enabled");

        // With its CRD (full schema) the PodMonitor is written, validated, and points at the brokers' metrics.
        MonitoringCrds.install(client, MonitoringCrds.POD_MONITOR);
        try {
            // The operator's own PodMonitor (config/monitoring/) passes the CRD's schema and selects the pods of
            // config/install/'s Deployment on a port they expose.
            var own = Serialization.unmarshal(Files.readString(repo.resolve("config/monitoring/operator-podmonitor.yaml")),
                    io.fabric8.openshift.api.model.monitoring.v1.PodMonitor.class);
            own.getMetadata().setNamespace(NS);
            client.resource(own).dryRun().create();
            var deployment = client.load(Files.newInputStream(repo.resolve("config/install/operator.yaml"))).items().stream()
                    .filter(o -> o instanceof io.fabric8.kubernetes.api.model.apps.Deployment)
                    .map(o -> (io.fabric8.kubernetes.api.model.apps.Deployment) o).findFirst().orElseThrow();
            assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(own.getSpec().getSelector().getMatchLabels());
            assertThat(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
                    .anySatisfy(p -> assertThat(p.getName()).isEqualTo(own.getSpec().getPodMetricsEndpoints().get(0).getPort()));

            TbmqCluster labelled = edit(x -> {
                x.getSpec().getMonitoring().setInterval("15s");
                x.getSpec().getMonitoring().getLabels().put("release", "prometheus");
            });
            // Alerts are on by default: without the PrometheusRule API the condition says what is missing.
            await("MonitoringReady without the PrometheusRule API", () -> {
                Condition m = condition(get(), "MonitoringReady");
                return m != null && "PrometheusRuleNotServed".equals(m.getReason())
                        && m.getObservedGeneration() == labelled.getMetadata().getGeneration();
            });
            assertThat(condition(get(), "MonitoringReady").getStatus()).isEqualTo("False");
            assertThat(condition(get(), "MonitoringReady").getMessage()).contains("spec.monitoring.alerts", "PrometheusRule");
            MonitoringCrds.install(client, MonitoringCrds.PROMETHEUS_RULE);
            await("MonitoringReady", () -> {
                Condition m = condition(get(), "MonitoringReady");
                return m != null && "True".equals(m.getStatus()) && m.getObservedGeneration() == labelled.getMetadata().getGeneration();
            });
            assertThat(condition(get(), "MonitoringReady").getReason()).isEqualTo("MonitoringApplied");
            var monitor = client.resources(io.fabric8.openshift.api.model.monitoring.v1.PodMonitor.class).inNamespace(NS)
                    .withName(NAME + "-broker").get();
            assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
            assertThat(monitor.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> assertThat(o.getKind()).isEqualTo("TbmqCluster"));
            assertThat(monitor.getSpec().getPodMetricsEndpoints()).singleElement().satisfies(e -> {
                assertThat(e.getPath()).isEqualTo("/q/metrics");
                assertThat(e.getInterval()).isEqualTo("15s");
                assertThat(sts(NAME + "-broker").getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
                        .as("the port the PodMonitor names").anySatisfy(p -> assertThat(p.getName()).isEqualTo(e.getPort()));
            });
            assertThat(sts(NAME + "-broker").getSpec().getTemplate().getMetadata().getLabels())
                    .as("the broker pods the PodMonitor selects").containsAllEntriesOf(monitor.getSpec().getSelector().getMatchLabels());

            // The alerting rules of config/monitoring/, validated by the CRD's schema, each series scoped to this
            // cluster's brokers: the job the Prometheus Operator gives the PodMonitor's targets is NAMESPACE/NAME.
            var rule = client.resources(MonitoringCrds.PROMETHEUS_RULE).inNamespace(NS).withName(NAME + "-broker").get();
            assertThat(rule.getMetadata().getLabels()).containsEntry("release", "prometheus");
            assertThat(rule.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> assertThat(o.getKind()).isEqualTo("TbmqCluster"));
            var alerts = rule.getSpec().getGroups().stream().flatMap(g -> g.getRules().stream()).toList();
            assertThat(alerts).as("the alerts of config/monitoring/tbmq-alerts.yaml")
                    .hasSize(Files.readString(repo.resolve("config/monitoring/tbmq-alerts.yaml")).split("- alert: ", -1).length - 1);
            for (var alert : alerts) {
                String expr = alert.getExpr().getStrVal();
                assertThat(expr).as(alert.getAlert()).contains("job=\"" + NS + "/" + NAME + "-broker\"").doesNotContain("job=\"tbmq\"");
                assertThat(alert.getAnnotations()).as(alert.getAlert()).containsKeys("summary", "description");
            }
            assertThat(alerts).extracting(r -> r.getAlert()).contains("TbmqBrokerDown", "TbmqRedisUnreachable", "TbmqPublishesFailing");

            // Alerts off: the rule goes, the PodMonitor stays.
            TbmqCluster noAlerts = edit(x -> x.getSpec().getMonitoring().setAlerts(false));
            await("PrometheusRule deleted", () -> {
                Condition m = condition(get(), "MonitoringReady");
                return m != null && m.getObservedGeneration() == noAlerts.getMetadata().getGeneration()
                        && client.resources(MonitoringCrds.PROMETHEUS_RULE).inNamespace(NS).withName(NAME + "-broker").get() == null;
            });
            assertThat(condition(get(), "MonitoringReady").getStatus()).isEqualTo("True");
            assertThat(client.resources(MonitoringCrds.POD_MONITOR).inNamespace(NS).withName(NAME + "-broker").get()).isNotNull();

            // A team's own PrometheusRule of that name is theirs: never overwritten nor deleted, and the condition says so.
            var teams = new io.fabric8.openshift.api.model.monitoring.v1.PrometheusRuleBuilder().withNewMetadata().withName(NAME + "-broker")
                    .withNamespace(NS).endMetadata().withNewSpec().addNewGroup().withName("team").addNewRule().withAlert("TeamAlert")
                    .withExpr(new io.fabric8.kubernetes.api.model.IntOrString("vector(1)")).endRule().endGroup().endSpec().build();
            client.resource(teams).create();
            TbmqCluster taken = edit(x -> x.getSpec().getMonitoring().setAlerts(true));
            await("MonitoringReady NameTaken", () -> {
                Condition m = condition(get(), "MonitoringReady");
                return m != null && m.getObservedGeneration() == taken.getMetadata().getGeneration() && "NameTaken".equals(m.getReason());
            });
            assertThat(condition(get(), "MonitoringReady").getMessage()).contains("spec.monitoring.alerts", "does not belong");
            var kept = client.resources(MonitoringCrds.PROMETHEUS_RULE).inNamespace(NS).withName(NAME + "-broker").get();
            assertThat(kept.getMetadata().getOwnerReferences()).isNullOrEmpty();
            assertThat(kept.getSpec().getGroups()).singleElement().satisfies(g -> assertThat(g.getName()).isEqualTo("team"));
            TbmqCluster teamsOnly = edit(x -> x.getSpec().getMonitoring().setAlerts(false));
            await("MonitoringReady without alerts", () -> {
                Condition m = condition(get(), "MonitoringReady");
                return m != null && m.getObservedGeneration() == teamsOnly.getMetadata().getGeneration();
            });
            assertThat(client.resources(MonitoringCrds.PROMETHEUS_RULE).inNamespace(NS).withName(NAME + "-broker").get())
                    .as("not deleted: not this cluster's").isNotNull();
            client.resource(teams).delete();

            TbmqCluster off = edit(x -> {
                x.getSpec().getMonitoring().setEnabled(false);
                x.getSpec().getMonitoring().setAlerts(true);
            });
            await("PodMonitor deleted and the condition gone", () -> client.resources(io.fabric8.openshift.api.model.monitoring.v1.PodMonitor.class)
                    .inNamespace(NS).withName(NAME + "-broker").get() == null && condition(get(), "MonitoringReady") == null);
            awaitReady(off.getMetadata().getGeneration());
        } finally {
            MonitoringCrds.uninstall(client, MonitoringCrds.PROMETHEUS_RULE);
            MonitoringCrds.uninstall(client, MonitoringCrds.POD_MONITOR);
        }
    }

    @Test
    @Order(11)
    void aLegacyPoolIsNeverScaledAndASwitchToExternalKafkaKeepsTheManagedOneUntilAsked() throws Exception {
        String name = "switch";
        // A TbmqCluster from an earlier version: one pool with both KRaft roles, which Strimzi cannot scale.
        TbmqCluster c = cluster(name, NS, 200_000);
        c = client.resource(c).create();
        client.resource(new io.strimzi.api.kafka.model.nodepool.KafkaNodePoolBuilder().withNewMetadata().withName(name + "-kafka-pool")
                .withNamespace(NS).addToLabels("strimzi.io/cluster", name + "-kafka").endMetadata().withNewSpec().withReplicas(1)
                .withRoles(io.strimzi.api.kafka.model.nodepool.ProcessRoles.CONTROLLER, io.strimzi.api.kafka.model.nodepool.ProcessRoles.BROKER)
                .withNewJbodStorage().addNewPersistentClaimStorageVolume().withId(0).withSize("20Gi").endPersistentClaimStorageVolume()
                .endJbodStorage().endSpec().build()).create();
        await("the legacy pool refused", () -> condition(get(name), "KafkaScalingRefused") != null);
        assertThat(condition(get(name), "KafkaScalingRefused").getMessage()).contains("controller and broker roles", "stays at 1");
        assertThat(client.resources(KafkaNodePool.class).inNamespace(NS).withName(name + "-kafka-pool").get().getSpec().getReplicas())
                .isEqualTo(1);
        assertThat(client.resources(KafkaNodePool.class).inNamespace(NS).withName(name + "-kafka-brokers").get()).isNull();
        TbmqCluster managed = awaitReady(name, c.getMetadata().getGeneration());
        int partitions = Integer.parseInt(managed.getStatus().getPlan().getPartitions().getValue());

        TbmqCluster external = edit(name, x -> {
            x.getSpec().getKafka().setMode(io.tbmq.operator.api.Mode.EXTERNAL);
            x.getSpec().getKafka().setBootstrapServers("kafka-0.kafka.data.svc:9092");
        });
        TbmqCluster kept = awaitReady(name, external.getMetadata().getGeneration());
        assertThat(condition(kept, "UnusedKafka").getMessage()).contains("keeps running", "tbmq.io/delete-unused=kafka");
        assertThat(client.resources(Kafka.class).inNamespace(NS).withName(name + "-kafka").get()).as("kept").isNotNull();

        // docs/operator.md: a partition decrease is refused in every mode.
        TbmqCluster fewer = edit(name, x -> x.getSpec().getOverrides().setPartitions(4));
        TbmqCluster refused = awaitReady(name, fewer.getMetadata().getGeneration());
        assertThat(condition(refused, "PartitionsKept").getStatus()).isEqualTo("True");
        assertThat(client.configMaps().inNamespace(NS).withName(name + "-broker-live").get().getData().get("live.properties"))
                .contains("tbmq.kafka.msg-all-partitions=" + partitions);

        kubectl(repo, "-n", NS, "annotate", "tbmq", name, "tbmq.io/delete-unused=kafka");
        await("the unused Kafka deleted, its topics first", () -> client.resources(Kafka.class).inNamespace(NS).withName(name + "-kafka")
                .get() == null && client.resources(KafkaTopic.class).inNamespace(NS).withLabel("app.kubernetes.io/instance", name).list()
                        .getItems().isEmpty() && condition(get(name), "UnusedKafka") == null);
        kubectl(repo, "-n", NS, "delete", "tbmq", name);
    }

    @Test
    @Order(12)
    void aKafkaNoStrimziOperatorWatchesIsReportedWithTheFix() throws Exception {
        TbmqCluster c = client.resource(cluster("lonely", UNWATCHED, 20_000)).create();
        await("KafkaReady says nobody reconciles the Kafka", () -> {
            Condition k = condition(client.resources(TbmqCluster.class).inNamespace(UNWATCHED).withName("lonely").get(), "KafkaReady");
            return k != null && "StrimziNotWatching".equals(k.getReason());
        }, STRIMZI_STATUS_TIMEOUT.plus(TIMEOUT));
        Condition k = condition(client.resources(TbmqCluster.class).inNamespace(UNWATCHED).withName("lonely").get(), "KafkaReady");
        assertThat(k.getMessage()).contains("no Strimzi cluster operator reconciles namespace " + UNWATCHED, "STRIMZI_NAMESPACE",
                "docs/install.md");
        // Its broker pods passed the restricted Pod Security Standard of that namespace too.
        await("broker pods admitted", () -> sts(UNWATCHED, "lonely-broker").getStatus().getReadyReplicas() != null);
        client.resource(c).delete();
    }

    @Test
    @Order(13)
    void aTbmqUserGetsAPasswordReachesTheUsersFileWithoutARollAndLeavesWhenDeleted() throws Exception {
        String hashBefore = sts(NAME + "-broker").getSpec().getTemplate().getMetadata().getAnnotations().get("tbmq.io/config-hash");
        Path manifest = Files.createDirectories(repo.resolve("e2e/target")).resolve("tbmquser-meter.yaml");
        String sample = Files.readString(repo.resolve("config/samples/tbmquser-meter.yaml"));
        Files.writeString(manifest, sample.replace("cluster: dev", "cluster: " + NAME));
        kubectl(repo, "-n", NS, "apply", "-f", manifest.toString());
        await("TbmqUser meter-1 Ready", () -> userReady("meter-1"));
        String table = kubectl(repo, "-n", NS, "get", "tbmqusers");
        System.out.print(table);
        assertThat(table).contains("CLUSTER", "AUTHENTICATION", "READY").containsPattern("meter-1\\s+" + NAME + "\\s+PASSWORD\\s+True");

        String password = new String(java.util.Base64.getDecoder().decode(
                client.secrets().inNamespace(NS).withName("meter-1").get().getData().get("password")));
        await("meter-1 in the brokers' users file", () -> usersFile().contains("\"meter-1\""));
        String hash = usersFile().replaceAll("(?s).*\"password\" : \"([^\"]+)\".*", "$1");
        assertThat(io.tbmq.operator.users.PasswordHash.verify(password, hash)).as("the hash of the generated password").isTrue();
        assertThat(sts(NAME + "-broker").getSpec().getTemplate().getMetadata().getAnnotations().get("tbmq.io/config-hash"))
                .as("a user added rolls no broker").isEqualTo(hashBefore);

        // The schema refuses what the CRD can say is wrong; the controller names what only it can check.
        Files.writeString(manifest, sample.replace("cluster: dev", "cluster: " + NAME).replace("clientType: DEVICE", "clientType: ROBOT"));
        assertThat(kubectlOutcome(repo, false, "-n", NS, "apply", "-f", manifest.toString())).contains("clientType");
        String before = usersFile();
        kubectl(repo, "-n", NS, "patch", "tbmquser", "meter-1", "--type=merge", "-p", "{\"spec\":{\"acl\":{\"publish\":[\"a/#/b\"]}}}");
        await("InvalidSpec named", () -> {
            var u = client.resources(io.tbmq.operator.api.TbmqUser.class).inNamespace(NS).withName("meter-1").get();
            var c = u.getStatus() == null ? null : io.tbmq.operator.reconciler.Conditions.find(u.getStatus().getConditions(), "Ready");
            return c != null && "InvalidSpec".equals(c.getReason()) && c.getMessage().contains("spec.acl.publish[0]");
        });
        assertThat(usersFile()).as("an invalid edit takes nothing from the brokers").isEqualTo(before);

        kubectl(repo, "-n", NS, "delete", "tbmquser", "meter-1");
        await("meter-1 out of the users file and its Secret gone", () -> !usersFile().contains("\"meter-1\"")
                && client.secrets().inNamespace(NS).withName("meter-1").get() == null, Duration.ofSeconds(60));
    }

    private static boolean userReady(String name) {
        var u = client.resources(io.tbmq.operator.api.TbmqUser.class).inNamespace(NS).withName(name).get();
        var c = u == null || u.getStatus() == null ? null : io.tbmq.operator.reconciler.Conditions.find(u.getStatus().getConditions(), "Ready");
        return c != null && "True".equals(c.getStatus());
    }

    private static String usersFile() {
        var s = client.secrets().inNamespace(NS).withName(NAME + "-users").get();
        return s == null ? "" : new String(java.util.Base64.getDecoder().decode(s.getData().get("users.yaml")));
    }

    @Test
    @Order(14)
    void deletingTheClusterRemovesEverythingItOwns() throws Exception {
        kubectl(repo, "-n", NS, "delete", "tbmq", "--all");
        await("owned objects garbage-collected", () -> client.apps().statefulSets().inNamespace(NS).list().getItems().isEmpty()
                && client.resources(Kafka.class).inNamespace(NS).list().getItems().isEmpty()
                && client.resources(KafkaTopic.class).inNamespace(NS).list().getItems().isEmpty()
                && client.configMaps().inNamespace(NS).list().getItems().stream()
                        .noneMatch(m -> m.getMetadata().getName().startsWith(NAME))
                && client.services().inNamespace(NS).list().getItems().isEmpty(), Duration.ofSeconds(120));
    }

    @Test
    @Order(15)
    void makeUndeployRemovesTheOperatorAndTheCrd() throws Exception {
        plane.make(repo, "undeploy");
        await("operator and CRD gone", () -> client.apiextensions().v1().customResourceDefinitions()
                .withName("tbmqclusters.tbmq.io").get() == null
                && client.apiextensions().v1().customResourceDefinitions().withName("tbmqusers.tbmq.io").get() == null
                && client.rbac().clusterRoles().withName("tbmqcluster-cluster-role").get() == null
                && client.rbac().clusterRoles().withName("tbmquser-cluster-role").get() == null
                && client.apps().deployments().inNamespace("tbmq-system").list().getItems().isEmpty());
    }

    // ------------------------------------------------------------------ helpers

    /** kubectl (the one built with the control plane) against it, from {@code dir}; returns its output. */
    private static String kubectl(Path dir, String... args) throws Exception {
        return kubectlOutcome(dir, true, args);
    }

    private static String kubectlOutcome(Path dir, boolean mustSucceed, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ControlPlane.kubectl().toString(), "--kubeconfig", plane.kubeconfig().toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue() == 0).as(String.join(" ", cmd) + "\n" + out).isEqualTo(mustSucceed);
        return out;
    }

    private static TbmqCluster get() {
        return get(NAME);
    }

    private static TbmqCluster get(String name) {
        return client.resources(TbmqCluster.class).inNamespace(NS).withName(name).get();
    }

    /** A small cluster with an external Redis (the local redis-servers belong to the main one). */
    private static TbmqCluster cluster(String name, String namespace, long target) {
        TbmqCluster c = new TbmqCluster();
        c.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
        var spec = new io.tbmq.operator.api.TbmqClusterSpec();
        spec.setTargetThroughput(target);
        spec.getBroker().setAllowAnonymous(true);
        spec.getRedis().setMode(io.tbmq.operator.api.Mode.EXTERNAL);
        spec.getRedis().setNodes(List.of("redis.data.svc:6379"));
        c.setSpec(spec);
        return c;
    }

    /** Read, change, write back with the read resourceVersion (a concurrent write fails rather than being lost). */
    private static TbmqCluster edit(java.util.function.Consumer<TbmqCluster> change) {
        return edit(NAME, change);
    }

    private static TbmqCluster edit(String name, java.util.function.Consumer<TbmqCluster> change) {
        TbmqCluster c = get(name);
        change.accept(c);
        c.setStatus(null);
        return client.resource(c).update();
    }

    private static TbmqCluster awaitReady(long generation) {
        return awaitReady(NAME, generation);
    }

    private static TbmqCluster awaitReady(String name, long generation) {
        long t0 = System.nanoTime();
        String[] last = { "" };
        await("Ready for generation " + generation + " of " + name, () -> {
            TbmqCluster c = get(name);
            Condition r = c == null || c.getStatus() == null ? null : condition(c, "Ready");
            if (r != null && !r.getMessage().equals(last[0])) {
                // The log of what the cluster waited for, and when: where the time to Ready goes.
                last[0] = r.getMessage();
                System.out.printf("e2e: +%5d ms %s%n", (System.nanoTime() - t0) / 1_000_000, last[0]);
            }
            return r != null && "True".equals(r.getStatus()) && c.getStatus().getObservedGeneration() == generation
                    && r.getObservedGeneration() == generation;
        });
        return get(name);
    }

    private static Condition condition(TbmqCluster c, String type) {
        return c.getStatus().getConditions().stream().filter(x -> type.equals(x.getType())).findFirst().orElse(null);
    }

    private static StatefulSet sts(String name) {
        return sts(NS, name);
    }

    private static StatefulSet sts(String namespace, String name) {
        return client.apps().statefulSets().inNamespace(namespace).withName(name).get();
    }

    private static List<String> eventReasons() {
        return client.v1().events().inNamespace(NS).list().getItems().stream().map(e -> e.getReason()).toList();
    }

    private static List<NodeState> observeRedis(int count) {
        List<NodeState> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(observe(i));
        }
        return out;
    }

    private static NodeState observe(int ordinal) {
        return ClusterNodesParser.parse(endpoints.resolve(null, ordinal), redisCommand(ordinal, c -> c.clusterNodes()));
    }

    /** Redis process {@code ordinal} as a broker reaches it: with the password the operator keeps in its Secret, if any yet. */
    private static RedisURI redisUri(int ordinal) {
        RedisURI uri = RedisURI.create("127.0.0.1", redis.get(ordinal).port());
        var copy = client.secrets().inNamespace(NS).withName(NAME + "-redis-password").get();
        if (copy != null) {
            uri.setPassword(new String(java.util.Base64.getDecoder().decode(copy.getData().get("password")),
                    java.nio.charset.StandardCharsets.UTF_8).toCharArray());
        }
        return uri;
    }

    private static <T> T redisCommand(int ordinal, java.util.function.Function<io.lettuce.core.api.sync.RedisCommands<String, String>, T> command) {
        RedisClient c = RedisClient.create(redisUri(ordinal));
        try (StatefulRedisConnection<String, String> conn = c.connect()) {
            return command.apply(conn.sync());
        } finally {
            c.shutdown();
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        await(what, condition, TIMEOUT);
    }

    private static void await(String what, BooleanSupplier condition, Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                // not there yet
            }
            sleep(250);
        }
        TbmqCluster c = client.resources(TbmqCluster.class).inNamespace(NS).withName(NAME).get();
        throw new AssertionError("timed out waiting for " + what + "; status: "
                + (c == null ? "no TbmqCluster" : Serialization.asYaml(c.getStatus())));
    }

    private static String stackTraceOf(Throwable t) {
        java.io.StringWriter out = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(out));
        return out.toString();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void quietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            System.err.println("closing " + c + ": " + e);
        }
    }

}
