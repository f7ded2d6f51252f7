package io.tbmq.broker.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * The broker's configuration, {@code tbmq.*} in application.properties, system properties or
 * environment variables ({@code TBMQ_MQTT_MAX_PACKET_SIZE}...). docs/configuration.md lists
 * every key with its default.
 */
@ConfigMapping(prefix = "tbmq")
public interface BrokerConfig {

    /** Stable identity of this node (the pod name in Kubernetes); names the node's own Kafka topics. */
    @WithDefault("node-0")
    String nodeId();

    ListenersConfig listeners();

    MqttConfig mqtt();

    SecurityConfig security();

    KafkaConfig kafka();

    RedisConfig redis();

    PersistenceConfig persistence();

    ShutdownConfig shutdown();

    ClusterConfig cluster();

    AdminConfig admin();

    /**
     * A properties file whose settings the broker applies while it runs when the file changes
     * (tbmq.redis.lettuce-batch-size, the partition counts and replication factor of topics it
     * creates). The operator mounts its live-settings ConfigMap here and also lists the file in
     * quarkus.config.locations, so the values apply at start too. Unset: nothing is watched.
     */
    java.util.Optional<String> liveSettingsFile();

    /**
     * Where the broker writes why it stopped with an error, for Kubernetes to show as the container's
     * termination message; written only if the file exists. Read at exit from the system property or
     * TBMQ_TERMINATION_MESSAGE_PATH directly (TerminationMessage), so it works when the rest of the
     * configuration is invalid; declared here so that setting it is not an unknown key.
     */
    @WithDefault("/dev/termination-log")
    String terminationMessagePath();

    /** How often the live settings file is looked at. */
    @WithDefault("5s")
    java.time.Duration liveSettingsInterval();
}
