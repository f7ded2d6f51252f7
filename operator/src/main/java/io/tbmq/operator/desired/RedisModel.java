package io.tbmq.operator.desired;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.tbmq.operator.api.Fsync;
import io.tbmq.operator.api.RedisSpec;
import io.tbmq.operator.api.StorageSpec;
import io.tbmq.operator.api.TbmqCluster;

/**
 * The managed Redis Cluster: masters only (the TBMQ paper's Table 4 counts Redis nodes), each announcing
 * its pod IP to clients and to the cluster bus, and an append-only file (Redis writes each command to it before replying, fsync once a second unless spec.redis.fsync says ALWAYS). Not the
 * paper's RDB snapshots: the broker commits tbmq.msg.persisted offsets once Redis has replied, so
 * what Redis acknowledged and then lost in a crash could no longer be replayed from Kafka
 * (docs/reliability.md). {@code always} also survives a crash of the machine, at a latency
 * cost measured in docs/benchmarks.md.
 *
 * <p>Memory: {@code maxmemory} is {@value #MAXMEMORY_PERCENT}% of the container's limit with
 * {@code noeviction}, so a full Redis refuses writes with an error the broker reports (PUBACK 0x80
 * to v5 publishers) instead of evicting stored messages or being OOM-killed; the rest is headroom
 * for the append-only file's rewrite, a forked copy that duplicates the pages written meanwhile.
 * Pods run as Redis's user (999) under the restricted Pod Security Standard, and the operator
 * rolls them itself (OnDelete), one master at a time, each only once the cluster is whole again.
 * A master that is gone stops only its own slots ({@code cluster-require-full-coverage no}): every
 * key is one client's, so the other masters' clients go on instead of the whole cluster answering
 * CLUSTERDOWN once the node timeout has passed.
 */
public final class RedisModel {
    public static final String COMPONENT = "redis";
    public static final int PORT = 6379;
    /** The uid of the redis user in the official image (and in the one the project builds). */
    public static final long UID = 999;
    static final int MAXMEMORY_PERCENT = 60;
    /** The key of the password in the Secrets: the user's, and the operator's copy ({@link Names#redisPassword()}). */
    public static final String PASSWORD_KEY = "password";
    /** In the operator's copy while a password change rolls out: the password the brokers not restarted yet still use. */
    public static final String PREVIOUS_PASSWORD_KEY = "previous";
    /** On the operator's copy: goes up with each new password, and the brokers' pod template carries it. */
    public static final String PASSWORD_GENERATION = "tbmq.io/password-generation";
    /**
     * The readiness probe's user: it may only PING, and needs no password, so the probe keeps working
     * whichever password the pod started with and the operator changed since.
     */
    public static final String PROBE_USER = "tbmq-probe";
    /** The probe user's ACL rule, as the configuration file's {@code user} line gives it. */
    public static final String PROBE_USER_RULE = PROBE_USER + " on nopass -@all +ping";
    static final String CONF = """
            port 6379
            cluster-enabled yes
            cluster-config-file /data/nodes.conf
            cluster-node-timeout 5000
            cluster-require-full-coverage no
            cluster-preferred-endpoint-type ip
            cluster-allow-replica-migration no
            appendonly yes
            appendfsync %s
            save ""
            dir /data
            protected-mode no
            user %s
            """;

    private RedisModel() {
    }

    /** The append-only file's fsync policy the spec asks for; the default when it names none. */
    public static Fsync fsync(TbmqCluster owner) {
        Fsync fsync = owner.getSpec().getRedis().getFsync();
        return fsync == null ? Fsync.EVERYSEC : fsync;
    }

    public static ConfigMap config(TbmqCluster owner, Names names) {
        return new ConfigMapBuilder()
                .withMetadata(Owners.meta(owner, names.redis(), COMPONENT).build())
                .withData(Map.of("redis.conf", CONF.formatted(fsync(owner).redisValue(), PROBE_USER_RULE)))
                .build();
    }

    /** Headless: gives each pod a DNS name (the brokers' first addresses). Not-ready pods are published so a joining node is reachable. */
    public static Service headless(TbmqCluster owner, Names names) {
        return new ServiceBuilder()
                .withMetadata(Owners.meta(owner, names.redis(), COMPONENT).build())
                .withNewSpec()
                    .withClusterIP("None")
                    .withPublishNotReadyAddresses(true)
                    .withSelector(Labels.selector(owner.getMetadata().getName(), COMPONENT))
                    .addNewPort().withName("redis").withPort(PORT).endPort()
                    .addNewPort().withName("bus").withPort(PORT + 10000).endPort()
                .endSpec()
                .build();
    }

    /**
     * A ClusterIP Service in front of the ready Redis pods, the brokers' first seed. When every master
     * restarted with a new IP, the brokers' Redis client knows only the old IPs and falls back to its
     * seeds: a pod's DNS name can still give the old IP for seconds (the DNS caches), this Service's
     * address never changes and kube-proxy follows the pods as soon as they are ready.
     */
    public static Service client(TbmqCluster owner, Names names) {
        return new ServiceBuilder()
                .withMetadata(Owners.meta(owner, names.redisClient(), COMPONENT).build())
                .withNewSpec()
                    .withType("ClusterIP")
                    .withSelector(Labels.selector(owner.getMetadata().getName(), COMPONENT))
                    .addNewPort().withName("redis").withPort(PORT).endPort()
                .endSpec()
                .build();
    }

    /** A disruption (a node drain) takes at most one master at a time: its slots are unserved until it is back. */
    public static PodDisruptionBudget disruptionBudget(TbmqCluster owner, Names names) {
        return new PodDisruptionBudgetBuilder()
                .withMetadata(Owners.meta(owner, names.redis(), COMPONENT).build())
                .withNewSpec()
                    .withMaxUnavailable(new IntOrString(1))
                    .withNewSelector().withMatchLabels(Labels.selector(owner.getMetadata().getName(), COMPONENT)).endSelector()
                .endSpec()
                .build();
    }

    /**
     * The operator's copy of the Redis password ({@link Names#redisPassword()}): what the pods start
     * with and the brokers connect with. {@code previous}, while not null, is still accepted by every
     * Redis node, for the brokers that have not restarted with {@code password} yet.
     */
    public static Secret passwordSecret(TbmqCluster owner, Names names, String password, String previous, long generation) {
        Map<String, String> data = new java.util.TreeMap<>();
        data.put(PASSWORD_KEY, base64(password));
        if (previous != null) {
            data.put(PREVIOUS_PASSWORD_KEY, base64(previous));
        }
        return new SecretBuilder()
                .withMetadata(Owners.meta(owner, names.redisPassword(), COMPONENT)
                        .addToAnnotations(PASSWORD_GENERATION, Long.toString(generation)).build())
                .withType("Opaque")
                .withData(data)
                .build();
    }

    private static String base64(String value) {
        return java.util.Base64.getEncoder().encodeToString(value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** The spec's resources (or the default), always with a memory limit: maxmemory is derived from it. */
    static ResourceRequirements resources(TbmqCluster owner) {
        ResourceRequirements r = KafkaModel.resources(owner.getSpec().getRedis().getResources(), owner.getSpec().getTargetThroughput());
        Quantity limit = r.getLimits() == null ? null : r.getLimits().get("memory");
        Quantity request = r.getRequests() == null ? null : r.getRequests().get("memory");
        if (limit != null || request == null) {
            return r;
        }
        return new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder(r).addToLimits("memory", request).build();
    }

    /** Bytes Redis may use for data: a share of the memory limit, leaving room for the AOF rewrite's fork. */
    static long maxmemory(ResourceRequirements resources) {
        Quantity limit = resources.getLimits() == null ? null : resources.getLimits().get("memory");
        long bytes = limit == null ? 0 : Quantity.getAmountInBytes(limit).longValue();
        return bytes * MAXMEMORY_PERCENT / 100;
    }

    public static StatefulSet statefulSet(TbmqCluster owner, Names names, int replicas) {
        return statefulSet(owner, names, replicas, volumes(owner));
    }

    /** The Redis pods' volumes: their size and StorageClass (null: the Kubernetes cluster's default). */
    public record Volumes(String size, String storageClass) {
    }

    /** The volumes the spec asks for. */
    public static Volumes volumes(TbmqCluster owner) {
        StorageSpec storage = storage(owner);
        return new Volumes(storage.getSize(), KafkaModel.blankToNull(storage.getStorageClass()));
    }

    /** The Redis volumes' storage; every read of its size goes through here, so a block without one gets the default. */
    public static StorageSpec storage(TbmqCluster owner) {
        StorageSpec storage = owner.getSpec().getRedis().getStorage();
        return (storage == null ? new StorageSpec() : storage).withDefaultSize(RedisSpec.DEFAULT_STORAGE_SIZE);
    }

    /** With {@code volumes} (the existing volumes' size or class where the spec's cannot be applied). */
    public static StatefulSet statefulSet(TbmqCluster owner, Names names, int replicas, Volumes volumes) {
        RedisSpec spec = owner.getSpec().getRedis();
        String cluster = owner.getMetadata().getName();
        ResourceRequirements resources = resources(owner);
        List<String> args = new java.util.ArrayList<>(List.of("/etc/redis/redis.conf",
                // Clients are redirected to, and reconnect to, the pod IP: a pod back with a new IP is
                // reachable as soon as the others learn it by gossip, while its DNS name would still
                // resolve to the old IP, or to nothing, for as long as DNS caches hold it (CoreDNS's
                // `cache 30` plus the client's own cache: a minute-long pause measured on a real node).
                // No announced hostname either: Lettuce prefers one listed in CLUSTER NODES. The node
                // keeps its place without it: its id is in nodes.conf on its volume.
                "--cluster-announce-ip", "$(POD_IP)",
                "--maxmemory", Long.toString(maxmemory(resources)), "--maxmemory-policy", "noeviction"));
        List<EnvVar> env = new java.util.ArrayList<>(List.of(
                new EnvVarBuilder().withName("POD_NAME").withNewValueFrom().withNewFieldRef().withFieldPath("metadata.name")
                        .endFieldRef().endValueFrom().build(),
                new EnvVarBuilder().withName("POD_NAMESPACE").withNewValueFrom().withNewFieldRef()
                        .withFieldPath("metadata.namespace").endFieldRef().endValueFrom().build(),
                new EnvVarBuilder().withName("POD_IP").withNewValueFrom().withNewFieldRef().withFieldPath("status.podIP")
                        .endFieldRef().endValueFrom().build()));
        // Always a password: the Secret the spec names, else one the operator generated (RedisPasswordRotation).
        env.add(new EnvVarBuilder().withName("REDIS_PASSWORD").withNewValueFrom().withNewSecretKeyRef()
                .withName(names.redisPassword()).withKey(PASSWORD_KEY).endSecretKeyRef().endValueFrom().build());
        args.addAll(List.of("--requirepass", "$(REDIS_PASSWORD)", "--masterauth", "$(REDIS_PASSWORD)"));
        String ping = "redis-cli --user " + PROBE_USER + " --pass " + PROBE_USER + " --no-auth-warning ping | grep -q PONG";
        return new StatefulSetBuilder()
                .withMetadata(Owners.meta(owner, names.redis(), COMPONENT).build())
                .withNewSpec()
                    .withReplicas(replicas)
                    .withServiceName(names.redis())
                    // All pods start together; the operator forms the cluster once they are all ready.
                    .withPodManagementPolicy("Parallel")
                    // The operator replaces pods itself, one at a time and only while the cluster is whole.
                    .withNewUpdateStrategy().withType("OnDelete").endUpdateStrategy()
                    .withNewSelector().withMatchLabels(Labels.selector(cluster, COMPONENT)).endSelector()
                    .withNewPersistentVolumeClaimRetentionPolicy()
                        .withWhenDeleted(storage(owner).isDeleteClaim() ? "Delete" : "Retain")
                        // A removed master has handed its slots over: its volume holds nothing.
                        .withWhenScaled("Delete")
                    .endPersistentVolumeClaimRetentionPolicy()
                    .withNewTemplate()
                        .withNewMetadata().withLabels(Labels.of(cluster, COMPONENT)).endMetadata()
                        .withNewSpec()
                            .withAffinity(PodPlacement.spreadAcrossNodes(Labels.selector(cluster, COMPONENT)))
                            .withSecurityContext(PodSecurity.pod(UID))
                            .addNewContainer()
                                .withName("redis")
                                .withSecurityContext(PodSecurity.container())
                                .withImage(spec.getImage())
                                .withCommand("redis-server")
                                .withArgs(args)
                                .withEnv(env)
                                .addNewPort().withName("redis").withContainerPort(PORT).endPort()
                                .addNewPort().withName("bus").withContainerPort(PORT + 10000).endPort()
                                .withResources(resources)
                                .withNewReadinessProbe()
                                    .withNewExec().withCommand("sh", "-c", ping).endExec()
                                    .withPeriodSeconds(5)
                                .endReadinessProbe()
                                .withNewLivenessProbe()
                                    .withNewTcpSocket().withNewPort(PORT).endTcpSocket()
                                    .withInitialDelaySeconds(15)
                                    .withPeriodSeconds(10)
                                .endLivenessProbe()
                                .addNewVolumeMount().withName("data").withMountPath("/data").endVolumeMount()
                                .addNewVolumeMount().withName("conf").withMountPath("/etc/redis").endVolumeMount()
                            .endContainer()
                            .addNewVolume().withName("conf").withNewConfigMap().withName(names.redis()).endConfigMap()
                                .endVolume()
                        .endSpec()
                    .endTemplate()
                    .addNewVolumeClaimTemplate()
                        .withNewMetadata().withName("data").withLabels(Labels.of(cluster, COMPONENT)).endMetadata()
                        .withNewSpec()
                            .withAccessModes("ReadWriteOnce")
                            .withStorageClassName(volumes.storageClass())
                            .withNewResources().addToRequests("storage", new Quantity(volumes.size())).endResources()
                        .endSpec()
                    .endVolumeClaimTemplate()
                .endSpec()
                .build();
    }
}
