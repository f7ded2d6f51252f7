package io.tbmq.operator.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.tbmq.operator.api.Fsync;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.BrokerModel;
import io.tbmq.operator.desired.RedisModel;
import io.tbmq.operator.desired.Samples;
import io.tbmq.operator.provision.Applier;
import io.tbmq.operator.provision.RedisProvisioner;
import io.tbmq.operator.redis.RedisNode;
import io.tbmq.operator.redis.RedisServers;

/**
 * The running Redis cluster while the API server refuses the pods of an edited Redis spec: the
 * reconciler against fabric8's mock API server, whose Redis pods are real redis-server processes
 * started as the pods are (their password, the probe user). What the refused spec asks of the
 * running nodes waits with it; what keeps them safe goes on.
 */
@EnableKubernetesMockClient(crud = true)
class RedisWhileItsPodsAreRefusedIT {
    private static final String NS = "iot";
    private static final String REVISION = "r1";
    private static final Applier.PodCheck PASSING = (sts, addsPods) -> java.util.Optional.empty();
    /** Refuses every Redis pod, saying which image it was asked about. */
    private static final Applier.PodCheck REFUSING_REDIS = (sts, addsPods) -> {
        if (sts.getMetadata().getName().endsWith("-redis")) {
            throw new Applier.PodsRefused(sts.getMetadata().getName(), "pods \"x\" is forbidden: [maximum cpu usage per Container is 1"
                    + ", but limit is 2] (" + sts.getSpec().getTemplate().getSpec().getContainers().get(0).getImage() + ")");
        }
        return java.util.Optional.empty();
    };

    KubernetesClient client;
    @TempDir
    Path dir;
    private RedisServers servers;
    private List<RedisNode> nodes = List.of();
    private TbmqClusterReconciler reconciler;
    private TbmqCluster cluster;

    @AfterEach
    void stop() throws InterruptedException {
        if (servers != null) {
            servers.close();
        }
    }

    @Test
    void anFsyncEditWaitsWithTheRefusedSpecWhileTheAppendOnlyFileIsKeptOn() throws Exception {
        String password = runningCluster();
        assertThat(config(nodes.get(0), password, "appendfsync")).isEqualTo("everysec");
        // Someone turns the append-only file off on one node while the spec is refused.
        RedisServers.command(nodes.get(1), "-a", password, "--no-auth-warning", "config", "set", "appendonly", "no");

        reconciler.podCheck = REFUSING_REDIS;
        edit(c -> {
            c.getSpec().getRedis().setFsync(Fsync.ALWAYS);
            c.getSpec().getRedis().setImage("redis:7.4.9");
        });
        // Until a pass got as far as the append-only file (one may stop at a gossip hiccup), and on every pass before.
        reconcileUntil("appendonly turned on again", () -> {
            assertThat(condition("RedisReady")).satisfies(r -> {
                assertThat(r.getReason()).isEqualTo(Applier.PodsRefused.REASON);
                assertThat(r.getMessage()).contains("maximum cpu usage per Container");
            });
            for (RedisNode node : nodes) {
                assertThat(config(node, password, "appendfsync")).as("redis-%d: the refused spec's fsync waits", node.ordinal())
                        .isEqualTo("everysec");
            }
            return config(nodes.get(1), password, "appendonly").equals("yes");
        });

        reconciler.podCheck = PASSING;
        reconcileUntil("fsync always on every node", () -> {
            for (RedisNode node : nodes) {
                if (!config(node, password, "appendfsync").equals("always")) {
                    return false;
                }
            }
            return true;
        });
        assertThat(condition("RedisReady").getReason()).isNotEqualTo(Applier.PodsRefused.REASON);
    }

    @Test
    void aPasswordChangeRollsTheBrokersButKeepsTheOldPasswordWhileTheRedisPodsAreRefused() throws Exception {
        String old = runningCluster();
        String broker = brokerPod(1);
        client.resource(new SecretBuilder().withNewMetadata().withName("redis-auth").withNamespace(NS).endMetadata()
                .addToData(RedisModel.PASSWORD_KEY, base64("the-new-one")).build()).create();

        reconciler.podCheck = REFUSING_REDIS;
        edit(c -> {
            c.getSpec().getRedis().setPasswordSecret("redis-auth");
            c.getSpec().getRedis().setImage("redis:7.4.9");
        });
        reconcileUntil("the new password accepted", () -> old.equals(copy().get(RedisModel.PREVIOUS_PASSWORD_KEY)));
        assertThat(condition("RedisReady").getReason()).isEqualTo(Applier.PodsRefused.REASON);
        for (RedisNode node : nodes) {
            assertThat(auth(node, old)).as("redis-%d, the old password", node.ordinal()).isEqualTo("OK");
            assertThat(auth(node, "the-new-one")).as("redis-%d, the new one beside it", node.ordinal()).isEqualTo("OK");
        }
        assertThat(copy().get(RedisModel.PREVIOUS_PASSWORD_KEY)).isEqualTo(old);
        assertThat(brokerTemplateGeneration()).as("the brokers roll onto the new password").isEqualTo("2");
        assertThat(condition(RedisProvisioner.PASSWORD_CHANGING).getMessage()).contains("the brokers restart with the new one");
        reconcileUntil("the brokers awaited", () -> condition(RedisProvisioner.PASSWORD_CHANGING).getMessage()
                .contains("until these brokers have restarted with the new one: " + broker));

        // The broker restarted with the new password; the Redis pods still run the old template, which the spec cannot replace.
        client.pods().inNamespace(NS).withName(broker).delete();
        brokerPod(2);
        reconcileUntil("the Redis pods awaited", () -> {
            for (RedisNode node : nodes) {
                assertThat(auth(node, old)).as("redis-%d: pods of the old template may predate the probe user", node.ordinal())
                        .isEqualTo("OK");
            }
            return "RedisPodsReplacing".equals(condition(RedisProvisioner.PASSWORD_CHANGING).getReason());
        });
        for (int pass = 0; pass < 2; pass++) {
            reconciler.reconcile(cluster, client);
        }
        for (RedisNode node : nodes) {
            assertThat(auth(node, old)).as("redis-%d: still, passes later", node.ordinal()).isEqualTo("OK");
        }
        assertThat(condition("RedisReady").getReason()).isEqualTo(Applier.PodsRefused.REASON);
        assertThat(condition(RedisProvisioner.PASSWORD_CHANGING)).satisfies(r -> {
            assertThat(r.getReason()).isEqualTo("RedisPodsReplacing");
            assertThat(r.getMessage()).contains("the old one is refused once the Redis pods are made from the spec, whose pods the"
                    + " API server refuses");
        });
        assertThat(copy().get(RedisModel.PREVIOUS_PASSWORD_KEY)).isEqualTo(old);

        // The policy relaxed: the spec is written, and the controller has a revision its pods are not made from yet.
        reconciler.podCheck = PASSING;
        StatefulSet redis = client.apps().statefulSets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-redis").get();
        redis.getStatus().setUpdateRevision("r2");
        client.resource(redis).updateStatus();
        reconcileUntil("the pods replaced first", () -> condition(RedisProvisioner.PASSWORD_CHANGING).getMessage()
                .contains("Redis pods made from an older template are replaced before the old password is refused"));
        assertThat(condition("RedisReady").getReason()).isNotEqualTo(Applier.PodsRefused.REASON);
        for (RedisNode node : nodes) {
            assertThat(auth(node, old)).as("redis-%d: until the pods are replaced", node.ordinal()).isEqualTo("OK");
        }
        assertThat(copy().get(RedisModel.PREVIOUS_PASSWORD_KEY)).as("the change goes on once they are").isEqualTo(old);
    }

    @Test
    void whenThePodsTheRunningStatefulSetWouldReplaceAreRefusedTooBothRefusalsAreSaid() throws Exception {
        String password = runningCluster();
        String runningImage = client.apps().statefulSets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-redis").get()
                .getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
        // A template written before a LimitRange came, whose pods the controller has not made yet.
        StatefulSet redis = client.apps().statefulSets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-redis").get();
        redis.getStatus().setUpdateRevision("r2");
        client.resource(redis).updateStatus();

        reconciler.podCheck = REFUSING_REDIS;
        edit(c -> c.getSpec().getRedis().setImage("redis:7.4.9"));
        reconcileUntil("both refusals said", () -> {
            assertThat(client.pods().inNamespace(NS).list().getItems()).as("no Redis pod deleted").hasSize(nodes.size());
            assertThat(condition("RedisReady").getReason()).isEqualTo(Applier.PodsRefused.REASON);
            return condition("RedisReady").getMessage().contains("not replaced either");
        });
        String message = condition("RedisReady").getMessage();
        assertThat(message).as("the spec's refusal, the one to fix, first").startsWith("the API server refuses the pods of StatefulSet")
                .containsSubsequence("(redis:7.4.9)", "the running StatefulSet's pods are refused too", "(" + runningImage + ")");
        assertThat(config(nodes.get(0), password, "appendonly")).isEqualTo("yes");
    }

    /** A TbmqCluster with an external Kafka and a managed Redis whose pods run, serve every slot and are ready; its password. */
    private String runningCluster() throws Exception {
        TbmqCluster c = Samples.load("tbmq-external.yaml", NS);
        c.getMetadata().setUid(null);
        c.getMetadata().setGeneration(null);
        c.getSpec().getRedis().setMode(Mode.MANAGED);
        c.getSpec().getRedis().setNodes(null);
        c.getSpec().getRedis().setPasswordSecret(null);
        cluster = client.resource(c).inNamespace(NS).create();
        cluster.getMetadata().setGeneration(1L);
        client.resource(new SecretBuilder().withNewMetadata().withName("kafka-client").withNamespace(NS).endMetadata()
                .addToData("client.properties", "eA==").build()).create();
        client.resource(new SecretBuilder().withNewMetadata().withName("fleet-users").withNamespace(NS).endMetadata()
                .addToData("credentials.yaml", "eA==").build()).create();

        servers = new RedisServers(dir);
        List<RedisNode> started = new ArrayList<>();
        nodes = started;
        reconciler = new TbmqClusterReconciler((pod, ordinal) -> started.get(ordinal), TbmqClusterReconciler.Settings.defaults(false));
        reconciler.reachability = spec -> List.of();
        reconciler.podCheck = PASSING;
        reconciler.reconcile(cluster, client);

        StatefulSet redis = client.apps().statefulSets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-redis").get();
        int replicas = redis.getSpec().getReplicas();
        String password = copy().get(RedisModel.PASSWORD_KEY);
        List<String> asPod = new ArrayList<>(List.of("--requirepass", password, "--masterauth", password, "--user"));
        asPod.addAll(List.of(RedisModel.PROBE_USER_RULE.split(" ")));
        started.addAll(servers.start(0, replicas, asPod));
        for (int i = 0; i < replicas; i++) {
            client.resource(new PodBuilder().withNewMetadata().withName(redis.getMetadata().getName() + "-" + i).withNamespace(NS)
                    .withLabels(redis.getSpec().getTemplate().getMetadata().getLabels())
                    .addToLabels("controller-revision-hash", REVISION).endMetadata()
                    .withNewStatus().withPhase("Running").withPodIP("127.0.0.1").addNewCondition().withType("Ready")
                    .withStatus("True").endCondition().endStatus().build()).create();
        }
        // Plays the StatefulSet controller: it has taken up this spec, and made every pod from it.
        redis.setStatus(new StatefulSetStatusBuilder().withObservedGeneration(redis.getMetadata().getGeneration() + 100)
                .withReplicas(replicas).withReadyReplicas(replicas).withUpdatedReplicas(replicas).withCurrentRevision(REVISION)
                .withUpdateRevision(REVISION).build());
        client.resource(redis).updateStatus();

        long until = System.currentTimeMillis() + 60_000;
        while (!"True".equals(condition("RedisReady").getStatus())) {
            assertThat(System.currentTimeMillis()).as("RedisReady: %s", condition("RedisReady").getMessage()).isLessThan(until);
            Thread.sleep(200);
            reconciler.reconcile(cluster, client);
        }
        assertThat(config(nodes.get(1), password, "appendonly")).as("turned on by the operator").isEqualTo("yes");
        return password;
    }

    @FunctionalInterface
    private interface Check {
        boolean holds() throws Exception;
    }

    /** Reconciles until {@code done} holds (a pass may stop early, at a gossip hiccup, say), at most 30 s. */
    private void reconcileUntil(String what, Check done) throws Exception {
        long until = System.currentTimeMillis() + 30_000;
        while (true) {
            reconciler.reconcile(cluster, client);
            if (done.holds()) {
                return;
            }
            assertThat(System.currentTimeMillis()).as("%s; RedisReady: %s", what, condition("RedisReady").getMessage()).isLessThan(until);
            Thread.sleep(200);
        }
    }

    private void edit(java.util.function.Consumer<TbmqCluster> change) {
        change.accept(cluster);
        cluster.getMetadata().setGeneration(cluster.getMetadata().getGeneration() + 1);
    }

    /** A running, ready broker pod started with the Redis password of {@code generation}; its name. */
    private String brokerPod(long generation) {
        StatefulSet brokers = client.apps().statefulSets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-broker").get();
        String name = brokers.getMetadata().getName() + "-0-gen" + generation;
        client.resource(new PodBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .withLabels(brokers.getSpec().getTemplate().getMetadata().getLabels())
                .addToAnnotations(BrokerModel.REDIS_PASSWORD_VERSION, Long.toString(generation)).endMetadata()
                .withNewStatus().withPhase("Running").endStatus().build()).create();
        return name;
    }

    private String brokerTemplateGeneration() {
        return client.apps().statefulSets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-broker").get().getSpec()
                .getTemplate().getMetadata().getAnnotations().get(BrokerModel.REDIS_PASSWORD_VERSION);
    }

    /** The operator's copy of the Redis password: what the pods and brokers run with, and the one still accepted. */
    private Map<String, String> copy() {
        var secret = client.secrets().inNamespace(NS).withName(cluster.getMetadata().getName() + "-redis-password").get();
        Map<String, String> decoded = new java.util.HashMap<>();
        secret.getData().forEach((k, v) -> decoded.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
        return decoded;
    }

    private Condition condition(String type) {
        return Conditions.find(cluster.getStatus().getConditions(), type);
    }

    private static String config(RedisNode node, String password, String parameter) throws Exception {
        String[] lines = RedisServers.command(node, "-a", password, "--no-auth-warning", "config", "get", parameter).trim().split("\n");
        return lines[lines.length - 1].trim();
    }

    private static String auth(RedisNode node, String password) throws Exception {
        return RedisServers.command(node, "--no-auth-warning", "auth", password).trim();
    }

    private static String base64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
