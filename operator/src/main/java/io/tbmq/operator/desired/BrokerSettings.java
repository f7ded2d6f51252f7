package io.tbmq.operator.desired;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.tbmq.operator.api.BrokerSpec;
import io.tbmq.operator.api.ListenerSpec;
import io.tbmq.operator.api.ListenersSpec;
import io.tbmq.operator.api.Mode;
import io.tbmq.operator.api.PersistenceSpec;
import io.tbmq.operator.api.RedisSpec;
import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.sizing.Plan;

/**
 * The broker settings (docs/configuration.md) the operator decides: where Kafka and Redis are,
 * listeners, persistence, plus the user's own {@code spec.broker.config}. Two kinds: settings a
 * broker reads once at start reach the pods as environment variables from a ConfigMap whose hash
 * is in the pod template (a change rolls the brokers); the settings a scale edit changes (Lettuce
 * batch size, partitions, replication) are {@link #LIVE} settings, in a file the brokers watch, so
 * scaling never restarts a broker.
 */
public final class BrokerSettings {
    static final String TLS_DIR = "/etc/tbmq/tls";
    static final String CREDENTIALS_DIR = "/etc/tbmq/credentials";
    static final String KAFKA_CLIENT_DIR = "/etc/tbmq/kafka";
    static final String ADMIN_DIR = "/etc/tbmq/admin";
    static final String USERS_DIR = "/etc/tbmq/users";
    static final String LIVE_DIR = "/etc/tbmq/live";
    static final String LIVE_FILE = "live.properties";
    /**
     * Settings a running broker applies from its live settings file (tbmq.live-settings-file), as the
     * "Live settings" table of docs/configuration.md names them ({@code <l>} a listener, {@code <category>} a
     * logger); a test holds the two equal.
     */
    public static final java.util.List<String> LIVE = java.util.List.of("tbmq.redis.lettuce-batch-size",
            "tbmq.kafka.msg-all-partitions", "tbmq.persistence.persisted-partitions", "tbmq.kafka.replication-factor",
            "tbmq.listeners.<l>.max-connections", "tbmq.listeners.<l>.max-connection-rate", "tbmq.security.password-cache-size",
            "quarkus.log.level", "quarkus.log.category.\"<category>\".level");
    private static final java.util.List<java.util.regex.Pattern> LIVE_KEYS = LIVE.stream()
            .map(k -> java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(k)
                    .replace("<l>", "\\E(tcp|tls|ws|wss)\\Q").replace("\"<category>\"", "\\E\"?[^\"]+\"?\\Q")))
            .toList();

    /** Whether a running broker applies {@code key} without a restart. */
    public static boolean isLive(String key) {
        return LIVE_KEYS.stream().anyMatch(p -> p.matcher(key).matches());
    }

    private BrokerSettings() {
    }

    /** The live settings (property name to value, stable order): applied by running brokers without a restart. */
    public static Map<String, String> live(TbmqCluster owner, Plan plan, TopicPartitions partitions) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("tbmq.kafka.replication-factor", Integer.toString(plan.replicationFactor().value()));
        p.put("tbmq.kafka.msg-all-partitions", Integer.toString(partitions.messages()));
        p.put("tbmq.persistence.persisted-partitions", Integer.toString(partitions.persisted()));
        p.put("tbmq.redis.lettuce-batch-size", Integer.toString(plan.lettuceBatchSize().value()));
        if (owner.getSpec().getBroker().getConfig() != null) {
            new TreeMap<>(owner.getSpec().getBroker().getConfig()).forEach((k, v) -> {
                if (isLive(k)) {
                    p.put(k, v);
                }
            });
        }
        return p;
    }

    /** The live settings as the file the brokers read. */
    public static String liveFile(Map<String, String> live) {
        StringBuilder out = new StringBuilder("# Applied by running brokers without a restart (tbmq.live-settings-file).\n");
        live.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        return out.toString();
    }

    /** The settings read at start (property name to value, stable order): a change rolls the brokers. */
    public static Map<String, String> properties(TbmqCluster owner, Plan plan, Names names) {
        var spec = owner.getSpec();
        BrokerSpec broker = spec.getBroker();
        Map<String, String> p = new LinkedHashMap<>();
        boolean managedKafka = spec.getKafka().getMode() != Mode.EXTERNAL;
        p.put("tbmq.kafka.bootstrap-servers", managedKafka ? names.kafkaBootstrap() : spec.getKafka().getBootstrapServers());
        // The operator's KafkaTopics hold the managed Kafka's topics; each broker still creates its own downlink topics.
        p.put("tbmq.live-settings-file", LIVE_DIR + "/" + LIVE_FILE);
        p.put("quarkus.config.locations", LIVE_DIR + "/" + LIVE_FILE);
        if (!managedKafka && notBlank(spec.getKafka().getClientSecret())) {
            p.put("tbmq.kafka.properties-file", KAFKA_CLIENT_DIR + "/client.properties");
        }
        RedisSpec redis = spec.getRedis();
        boolean managedRedis = redis.getMode() != Mode.EXTERNAL;
        p.put("tbmq.redis.mode", managedRedis || redis.isCluster() ? "cluster" : "standalone");
        p.put("tbmq.redis.nodes", managedRedis ? redisSeeds(names) : String.join(",", redis.getNodes()));
        PersistenceSpec persistence = broker.getPersistence() == null ? new PersistenceSpec() : broker.getPersistence();
        p.put("tbmq.persistence.device-messages-limit", Integer.toString(persistence.getDeviceMessagesLimit()));
        p.put("tbmq.persistence.device-message-ttl", persistence.getDeviceMessageTtl());
        p.put("tbmq.security.allow-anonymous", Boolean.toString(broker.isAllowAnonymous()));
        if (notBlank(broker.getAdminSecret())) {
            p.put("tbmq.admin.token-file", ADMIN_DIR + "/token");
        }
        if (notBlank(broker.getCredentialsSecret())) {
            p.put("tbmq.security.credentials-file", CREDENTIALS_DIR + "/credentials.yaml");
        }
        p.put("tbmq.security.users-file", USERS_DIR + "/" + UsersModel.FILE);
        ListenersSpec l = broker.getListeners() == null ? new ListenersSpec() : broker.getListeners();
        listener(p, "tcp", l.getMqtt(), null);
        listener(p, "tls", l.getMqtts(), broker.getTlsSecret());
        listener(p, "ws", l.getWs(), null);
        listener(p, "wss", l.getWss(), broker.getTlsSecret());
        if (broker.getConfig() != null) {
            new TreeMap<>(broker.getConfig()).forEach((k, v) -> {
                if (!isLive(k)) {
                    // Moved to the end, so that of two spellings of one key the one sorting last wins in environment().
                    p.remove(k);
                    p.put(k, v);
                }
            });
        }
        return p;
    }

    /** The same settings as environment variables (the MicroProfile Config mapping: upper case, _ for the rest). */
    public static Map<String, String> environment(Map<String, String> properties) {
        Map<String, String> env = new LinkedHashMap<>();
        properties.forEach((k, v) -> env.put(envName(k), v));
        return env;
    }

    static String envName(String property) {
        return property.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(Locale.ROOT);
    }

    /** Three seeds are enough for Lettuce to learn the topology; masters 0-2 always exist (at least 3). */
    private static String redisSeeds(Names names) {
        StringBuilder seeds = new StringBuilder(names.redisClient() + "." + names.namespace() + ".svc:" + RedisModel.PORT);
        for (int i = 0; i < 3; i++) {
            seeds.append(',').append(names.redisHost(i)).append(':').append(RedisModel.PORT);
        }
        return seeds.toString();
    }

    private static void listener(Map<String, String> p, String name, ListenerSpec listener, String tlsSecret) {
        boolean enabled = listener != null && listener.isEnabled();
        p.put("tbmq.listeners." + name + ".enabled", Boolean.toString(enabled));
        if (!enabled) {
            return;
        }
        p.put("tbmq.listeners." + name + ".port", Integer.toString(listener.getPort()));
        if (tlsSecret != null) {
            p.put("tbmq.listeners." + name + ".cert", TLS_DIR + "/tls.crt");
            p.put("tbmq.listeners." + name + ".key", TLS_DIR + "/tls.key");
        }
    }

    static boolean notBlank(String s) {
        return s != null && !s.isBlank();
    }
}
