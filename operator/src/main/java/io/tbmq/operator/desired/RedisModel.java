package io.tbmq.operator.desired;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.tbmq.operator.api.RedisSpec;
import io.tbmq.operator.api.StorageSpec;
import io.tbmq.operator.api.TbmqCluster;

/**
 * The managed Redis Cluster: masters only (the seeds' Table 4 counts Redis nodes), each announcing
 * its stable hostname so a pod that comes back with a new IP keeps its place in the cluster, and an
 * append-only file (Redis writes each command to it before replying, fsync once a second). Not the
 * paper's RDB snapshots: the broker commits tbmq.msg.persisted offsets once Redis has replied, so
 * what Redis acknowledged and then lost in a crash could no longer be replayed from Kafka
 * (docs/reliability.md). {@code always} would also survive a crash of the machine, at a latency
 * cost measured in docs/benchmarks.md.
 */
public final class RedisModel {
    public static final String COMPONENT = "redis";
    public static final int PORT = 6379;
    static final String CONF = """
            port 6379
            cluster-enabled yes
            cluster-config-file /data/nodes.conf
            cluster-node-timeout 5000
            cluster-preferred-endpoint-type hostname
            cluster-allow-replica-migration no
            appendonly yes
            appendfsync everysec
            save ""
            dir /data
            protected-mode no
            """;

    private RedisModel() {
    }

    public static ConfigMap config(TbmqCluster owner, Names names) {
        return new ConfigMapBuilder()
                .withMetadata(Owners.meta(owner, names.redis(), COMPONENT).build())
                .withData(Map.of("redis.conf", CONF))
                .build();
    }

    /** Headless: gives each pod the DNS name it announces. Not-ready pods are published so a joining node is reachable. */
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

    public static StatefulSet statefulSet(TbmqCluster owner, Names names, int replicas) {
        RedisSpec spec = owner.getSpec().getRedis();
        StorageSpec storage = spec.getStorage() == null ? new StorageSpec("8Gi") : spec.getStorage();
        String cluster = owner.getMetadata().getName();
        boolean auth = spec.getPasswordSecret() != null && !spec.getPasswordSecret().isBlank();
        List<String> args = new java.util.ArrayList<>(List.of("/etc/redis/redis.conf",
                "--cluster-announce-hostname", "$(POD_NAME)." + names.redis() + ".$(POD_NAMESPACE).svc"));
        List<EnvVar> env = new java.util.ArrayList<>(List.of(
                new EnvVarBuilder().withName("POD_NAME").withNewValueFrom().withNewFieldRef().withFieldPath("metadata.name")
                        .endFieldRef().endValueFrom().build(),
                new EnvVarBuilder().withName("POD_NAMESPACE").withNewValueFrom().withNewFieldRef()
                        .withFieldPath("metadata.namespace").endFieldRef().endValueFrom().build()));
        if (auth) {
            env.add(new EnvVarBuilder().withName("REDIS_PASSWORD").withNewValueFrom().withNewSecretKeyRef()
                    .withName(spec.getPasswordSecret()).withKey("password").endSecretKeyRef().endValueFrom().build());
            args.addAll(List.of("--requirepass", "$(REDIS_PASSWORD)", "--masterauth", "$(REDIS_PASSWORD)"));
        }
        String ping = "redis-cli " + (auth ? "-a \"$REDIS_PASSWORD\" --no-auth-warning " : "") + "ping | grep -q PONG";
        return new StatefulSetBuilder()
                .withMetadata(Owners.meta(owner, names.redis(), COMPONENT).build())
                .withNewSpec()
                    .withReplicas(replicas)
                    .withServiceName(names.redis())
                    // All pods start together; the operator forms the cluster once they are all ready.
                    .withPodManagementPolicy("Parallel")
                    .withNewSelector().withMatchLabels(Labels.selector(cluster, COMPONENT)).endSelector()
                    .withNewPersistentVolumeClaimRetentionPolicy()
                        .withWhenDeleted(storage.isDeleteClaim() ? "Delete" : "Retain")
                        // A removed master has handed its slots over: its volume holds nothing.
                        .withWhenScaled("Delete")
                    .endPersistentVolumeClaimRetentionPolicy()
                    .withNewTemplate()
                        .withNewMetadata().withLabels(Labels.of(cluster, COMPONENT)).endMetadata()
                        .withNewSpec()
                            .withAffinity(PodPlacement.spreadAcrossNodes(Labels.selector(cluster, COMPONENT)))
                            .addNewContainer()
                                .withName("redis")
                                .withImage(spec.getImage() == null ? RedisSpec.DEFAULT_IMAGE : spec.getImage())
                                .withCommand("redis-server")
                                .withArgs(args)
                                .withEnv(env)
                                .addNewPort().withName("redis").withContainerPort(PORT).endPort()
                                .addNewPort().withName("bus").withContainerPort(PORT + 10000).endPort()
                                .withResources(KafkaModel.resources(spec.getResources(), owner.getSpec().getTargetThroughput()))
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
                            .withStorageClassName(KafkaModel.blankToNull(storage.getStorageClass()))
                            .withNewResources().addToRequests("storage", new Quantity(storage.getSize())).endResources()
                        .endSpec()
                    .endVolumeClaimTemplate()
                .endSpec()
                .build();
    }
}
