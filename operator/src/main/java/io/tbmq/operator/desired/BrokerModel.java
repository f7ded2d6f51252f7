package io.tbmq.operator.desired;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.tbmq.operator.api.BrokerSpec;
import io.tbmq.operator.api.ListenerSpec;
import io.tbmq.operator.api.ListenersSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.sizing.Plan;

/**
 * The brokers: a StatefulSet (pod names are the node ids that name each node's Kafka topics), a
 * headless Service for those stable names, the client Service, the settings ConfigMap and a
 * PodDisruptionBudget. A settings change changes the pod template's hash annotation, so the
 * StatefulSet controller rolls the brokers one at a time, each waiting for the previous to be ready.
 */
public final class BrokerModel {
    public static final String COMPONENT = "broker";
    public static final String CONFIG_HASH = "tbmq.io/config-hash";
    /**
     * The version of the Redis password the brokers start with (the generation of the operator's
     * copy; an external Redis's Secret's resourceVersion): a new password rolls them, and the
     * operator knows which broker pods still run with the old one.
     */
    public static final String REDIS_PASSWORD_VERSION = "tbmq.io/redis-password-version";
    public static final int HTTP_PORT = 8080;
    /** The management port's name: health probes and /q/metrics (the PodMonitor names it). */
    public static final String HTTP_PORT_NAME = "http";
    /** The broker image's user (scripts/images.sh). */
    static final long UID = 185;
    /** Shares of the container's memory limit: heap, and direct memory (Netty's buffers); the rest is the JVM's own. */
    static final int HEAP_PERCENT = 50;
    static final int DIRECT_PERCENT = 25;

    private BrokerModel() {
    }

    public static ConfigMap config(TbmqCluster owner, Names names, Map<String, String> properties) {
        Map<String, String> env = BrokerSettings.environment(properties);
        if (redisPasswordSecret(owner, names) != null) {
            // The pod's own variable, from the Secret, wins: a copy from spec.broker.config would only
            // be a password in plain text in a ConfigMap, and roll the brokers for nothing when edited.
            env.remove(REDIS_PASSWORD);
        }
        return new ConfigMapBuilder()
                .withMetadata(Owners.meta(owner, names.brokerConfig(), COMPONENT).build())
                .withData(env)
                .build();
    }

    /** The live settings file (BrokerSettings#LIVE): not hashed into the pod template, so a change restarts nothing. */
    public static ConfigMap liveConfig(TbmqCluster owner, Names names, Map<String, String> live) {
        return new ConfigMapBuilder()
                .withMetadata(Owners.meta(owner, names.brokerLiveConfig(), COMPONENT).build())
                .withData(Map.of(BrokerSettings.LIVE_FILE, BrokerSettings.liveFile(live)))
                .build();
    }

    /**
     * JVM memory from the container's limit, so the pod cannot be OOM-killed under load: heap
     * {@value #HEAP_PERCENT}%, direct memory {@value #DIRECT_PERCENT}% (Netty's buffers count
     * against it and wait rather than grow past it), the rest for metaspace, threads, code and GC.
     */
    static String jvmOptions(io.fabric8.kubernetes.api.model.ResourceRequirements resources) {
        Quantity limit = resources.getLimits() == null ? null : resources.getLimits().get("memory");
        if (limit == null) {
            return "-XX:MaxRAMPercentage=" + HEAP_PERCENT;
        }
        long mib = Quantity.getAmountInBytes(limit).longValue() / (1024 * 1024);
        return "-Xmx" + mib * HEAP_PERCENT / 100 + "m -XX:MaxDirectMemorySize=" + mib * DIRECT_PERCENT / 100 + "m";
    }

    public static Service headless(TbmqCluster owner, Names names) {
        return new ServiceBuilder()
                .withMetadata(Owners.meta(owner, names.brokerHeadless(), COMPONENT).build())
                .withNewSpec()
                    .withClusterIP("None")
                    .withSelector(Labels.selector(owner.getMetadata().getName(), COMPONENT))
                    .withPorts(new ServicePortBuilder().withName(HTTP_PORT_NAME).withPort(HTTP_PORT).build())
                .endSpec()
                .build();
    }

    public static Service clientService(TbmqCluster owner, Names names) {
        ListenersSpec listeners = listeners(owner);
        List<ServicePort> ports = new ArrayList<>();
        for (var l : enabled(listeners).entrySet()) {
            ports.add(new ServicePortBuilder().withName(l.getKey()).withPort(l.getValue().getPort())
                    .withTargetPort(new IntOrString(l.getKey())).build());
        }
        return new ServiceBuilder()
                .withMetadata(Owners.meta(owner, names.brokers(), COMPONENT).build())
                .withNewSpec()
                    .withType(listeners.getServiceType().name())
                    .withSelector(Labels.selector(owner.getMetadata().getName(), COMPONENT))
                    .withPorts(ports)
                .endSpec()
                .build();
    }

    public static PodDisruptionBudget disruptionBudget(TbmqCluster owner, Names names) {
        return new PodDisruptionBudgetBuilder()
                .withMetadata(Owners.meta(owner, names.brokers(), COMPONENT).build())
                .withNewSpec()
                    .withMaxUnavailable(new IntOrString(1))
                    .withNewSelector().withMatchLabels(Labels.selector(owner.getMetadata().getName(), COMPONENT)).endSelector()
                .endSpec()
                .build();
    }

    public static StatefulSet statefulSet(TbmqCluster owner, Names names, Plan plan, ConfigMap config) {
        return statefulSet(owner, names, plan, config, null);
    }

    /** The Redis password's Secret: the operator's copy for the managed Redis (always one), the user's or none for an external one. */
    public static String redisPasswordSecret(TbmqCluster owner, Names names) {
        if (owner.getSpec().getRedis().getMode() != io.tbmq.operator.api.Mode.EXTERNAL) {
            return names.redisPassword();
        }
        String userSecret = owner.getSpec().getRedis().getPasswordSecret();
        return BrokerSettings.notBlank(userSecret) ? userSecret : null;
    }

    private static final String NODE_ID = "TBMQ_NODE_ID";
    private static final String POD_UID = "TBMQ_CLUSTER_POD_UID";
    private static final String CLUSTER_NAME = "TBMQ_CLUSTER_NAME";
    /** Set from {@link #redisPasswordSecret} where there is one, winning over spec.broker.config's. */
    public static final String REDIS_PASSWORD = "TBMQ_REDIS_PASSWORD";
    /**
     * Broker settings every broker container sets itself, per pod: its explicit variables win over the
     * ConfigMap's, so spec.broker.config cannot set them. (TBMQ_REDIS_PASSWORD too, where the operator
     * knows a password Secret.)
     */
    public static final java.util.Set<String> POD_VARIABLES = java.util.Set.of(NODE_ID, POD_UID, CLUSTER_NAME);

    /** {@code redisPasswordVersion}: the version of {@link #redisPasswordSecret}'s password, null when there is none. */
    public static StatefulSet statefulSet(TbmqCluster owner, Names names, Plan plan, ConfigMap config, String redisPasswordVersion) {
        BrokerSpec broker = owner.getSpec().getBroker();
        String cluster = owner.getMetadata().getName();
        List<EnvVar> env = new ArrayList<>();
        env.add(new EnvVarBuilder().withName(NODE_ID).withNewValueFrom().withNewFieldRef()
                .withFieldPath("metadata.name").endFieldRef().endValueFrom().build());
        // A container restarted in its pod after a crash starts without waiting for its predecessor's heartbeat to age.
        env.add(new EnvVarBuilder().withName(POD_UID).withNewValueFrom().withNewFieldRef()
                .withFieldPath("metadata.uid").endFieldRef().endValueFrom().build());
        // A second TbmqCluster given the same Kafka topics (an external Kafka, no topic prefix) is told apart by it.
        env.add(new EnvVarBuilder().withName(CLUSTER_NAME).withValue(names.namespace() + "/" + cluster).build());
        var resources = broker.getResources() != null ? withMemoryLimit(broker.getResources())
                : Resources.requests(plan.brokerCpuMillis().value() + "m", plan.brokerMemoryMib().value() + "Mi");
        // -Xmx wins over the image's -XX:MaxRAMPercentage, whatever their order.
        env.add(new EnvVarBuilder().withName("JAVA_TOOL_OPTIONS").withValue(jvmOptions(resources)).build());
        String redisSecret = redisPasswordSecret(owner, names);
        if (redisSecret != null) {
            env.add(new EnvVarBuilder().withName(REDIS_PASSWORD).withNewValueFrom().withNewSecretKeyRef()
                    .withName(redisSecret).withKey("password").endSecretKeyRef().endValueFrom().build());
        }
        List<Volume> volumes = new ArrayList<>();
        List<VolumeMount> mounts = new ArrayList<>();
        secretVolume("tls", broker.getTlsSecret(), BrokerSettings.TLS_DIR, volumes, mounts);
        secretVolume("credentials", broker.getCredentialsSecret(), BrokerSettings.CREDENTIALS_DIR, volumes, mounts);
        secretVolume("admin", broker.getAdminSecret(), BrokerSettings.ADMIN_DIR, volumes, mounts);
        // Always mounted, even with no TbmqUser yet: the first one then applies without a roll.
        secretVolume("users", names.brokerUsers(), BrokerSettings.USERS_DIR, volumes, mounts);
        if (owner.getSpec().getKafka().getMode() == io.tbmq.operator.api.Mode.EXTERNAL) {
            secretVolume("kafka-client", owner.getSpec().getKafka().getClientSecret(), BrokerSettings.KAFKA_CLIENT_DIR,
                    volumes, mounts);
        }
        List<ContainerPort> ports = new ArrayList<>();
        enabled(listeners(owner)).forEach((name, l) -> ports.add(
                new ContainerPortBuilder().withName(name).withContainerPort(l.getPort()).build()));
        ports.add(new ContainerPortBuilder().withName(HTTP_PORT_NAME).withContainerPort(HTTP_PORT).build());
        volumes.add(new VolumeBuilder().withName("live").withNewConfigMap().withName(names.brokerLiveConfig()).endConfigMap().build());
        mounts.add(new VolumeMountBuilder().withName("live").withMountPath(BrokerSettings.LIVE_DIR).withReadOnly(true).build());
        // The root filesystem is read-only: the JVM and Netty write their temporary files here.
        volumes.add(new VolumeBuilder().withName("tmp").withNewEmptyDir().withSizeLimit(new Quantity("256Mi")).endEmptyDir().build());
        mounts.add(new VolumeMountBuilder().withName("tmp").withMountPath("/tmp").build());
        return new StatefulSetBuilder()
                .withMetadata(Owners.meta(owner, names.brokers(), COMPONENT).build())
                .withNewSpec()
                    .withReplicas(plan.brokers().value())
                    .withServiceName(names.brokerHeadless())
                    .withPodManagementPolicy("Parallel")
                    .withNewUpdateStrategy().withType("RollingUpdate").endUpdateStrategy()
                    .withNewSelector().withMatchLabels(Labels.selector(cluster, COMPONENT)).endSelector()
                    .withNewTemplate()
                        .withNewMetadata()
                            .withLabels(Labels.of(cluster, COMPONENT))
                            .addToAnnotations(CONFIG_HASH, hash(config.getData(), broker))
                            .addToAnnotations(redisPasswordVersion == null ? Map.of() : Map.of(REDIS_PASSWORD_VERSION, redisPasswordVersion))
                        .endMetadata()
                        .withNewSpec()
                            // The broker drains within tbmq.shutdown.acknowledgement-wait + 2 x tbmq.shutdown.grace + closing: 40 s by default.
                            .withTerminationGracePeriodSeconds(60L)
                            .withAffinity(PodPlacement.spreadAcrossNodes(Labels.selector(cluster, COMPONENT)))
                            .withSecurityContext(PodSecurity.pod(UID))
                            .addNewContainer()
                                .withName("broker")
                                .withSecurityContext(PodSecurity.container())
                                .withImage(broker.getImage())
                                .withImagePullPolicy(broker.getImagePullPolicy())
                                .withPorts(ports)
                                .withEnv(env)
                                .addNewEnvFrom().withNewConfigMapRef().withName(names.brokerConfig()).endConfigMapRef().endEnvFrom()
                                .withResources(resources)
                                .withVolumeMounts(mounts)
                                .withNewStartupProbe()
                                    .withNewHttpGet().withPath("/q/health/started").withNewPort("http").endHttpGet()
                                    // Readiness is not asked before this passes: every second, for up to 3 minutes.
                                    .withPeriodSeconds(1).withFailureThreshold(180)
                                .endStartupProbe()
                                .withNewReadinessProbe()
                                    .withNewHttpGet().withPath("/q/health/ready").withNewPort("http").endHttpGet()
                                    // Asked every second: a restarted broker gets traffic within a second of
                                    // listening; 15 failures in a row (as 3 at 5 s before) take it out of the Service.
                                    .withPeriodSeconds(1).withFailureThreshold(15)
                                .endReadinessProbe()
                                .withNewLivenessProbe()
                                    .withNewHttpGet().withPath("/q/health/live").withNewPort("http").endHttpGet()
                                    .withPeriodSeconds(10).withFailureThreshold(3)
                                .endLivenessProbe()
                            .endContainer()
                            .withVolumes(volumes)
                        .endSpec()
                    .endTemplate()
                .endSpec()
                .build();
    }

    /** A memory request without a limit gets the request as its limit: the JVM is sized from the limit. */
    private static io.fabric8.kubernetes.api.model.ResourceRequirements withMemoryLimit(io.fabric8.kubernetes.api.model.ResourceRequirements r) {
        Quantity request = r.getRequests() == null ? null : r.getRequests().get("memory");
        if (request == null || r.getLimits() != null && r.getLimits().get("memory") != null) {
            return r;
        }
        return new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder(r).addToLimits("memory", request).build();
    }

    static Map<String, ListenerSpec> enabled(ListenersSpec l) {
        Map<String, ListenerSpec> enabled = new java.util.LinkedHashMap<>();
        if (l.getMqtt() != null && l.getMqtt().isEnabled()) {
            enabled.put("mqtt", l.getMqtt());
        }
        if (l.getMqtts() != null && l.getMqtts().isEnabled()) {
            enabled.put("mqtts", l.getMqtts());
        }
        if (l.getWs() != null && l.getWs().isEnabled()) {
            enabled.put("ws", l.getWs());
        }
        if (l.getWss() != null && l.getWss().isEnabled()) {
            enabled.put("wss", l.getWss());
        }
        return enabled;
    }

    static ListenersSpec listeners(TbmqCluster owner) {
        var l = owner.getSpec().getBroker().getListeners();
        return l == null ? new ListenersSpec() : l;
    }

    private static void secretVolume(String name, String secret, String dir, List<Volume> volumes, List<VolumeMount> mounts) {
        if (!BrokerSettings.notBlank(secret)) {
            return;
        }
        volumes.add(new VolumeBuilder().withName(name).withNewSecret().withSecretName(secret).endSecret().build());
        mounts.add(new VolumeMountBuilder().withName(name).withMountPath(dir).withReadOnly(true).build());
    }

    /** Changes when a setting or a mounted Secret's name changes, which rolls the brokers. */
    static String hash(Map<String, String> settings, BrokerSpec broker) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            new java.util.TreeMap<>(settings).forEach((k, v) -> digest.update((k + "=" + v + "\n").getBytes(StandardCharsets.UTF_8)));
            digest.update(("tls=" + broker.getTlsSecret() + ",credentials=" + broker.getCredentialsSecret()
                    + (broker.getAdminSecret() == null ? "" : ",admin=" + broker.getAdminSecret()))
                    .getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
