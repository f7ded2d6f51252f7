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
 * The broker settings (docs/configuration.md) the operator decides: where Kafka and Redis are, the
 * planned partitions and Lettuce batch size, listeners, persistence, plus the user's own
 * {@code spec.broker.config}. They reach the pods as environment variables from a ConfigMap.
 */
public final class BrokerSettings {
    static final String TLS_DIR = "/etc/tbmq/tls";
    static final String CREDENTIALS_DIR = "/etc/tbmq/credentials";
    static final String KAFKA_CLIENT_DIR = "/etc/tbmq/kafka";

    private BrokerSettings() {
    }

    /** Property name to value, in a stable order. */
    public static Map<String, String> properties(TbmqCluster owner, Plan plan, Names names, int partitions) {
        var spec = owner.getSpec();
        BrokerSpec broker = spec.getBroker();
        Map<String, String> p = new LinkedHashMap<>();
        boolean managedKafka = spec.getKafka().getMode() != Mode.EXTERNAL;
        p.put("tbmq.kafka.bootstrap-servers", managedKafka ? names.kafkaBootstrap() : spec.getKafka().getBootstrapServers());
        p.put("tbmq.kafka.replication-factor", Integer.toString(plan.replicationFactor().value()));
        p.put("tbmq.kafka.msg-all-partitions", Integer.toString(partitions));
        p.put("tbmq.persistence.persisted-partitions", Integer.toString(partitions));
        if (!managedKafka && notBlank(spec.getKafka().getClientSecret())) {
            p.put("tbmq.kafka.properties-file", KAFKA_CLIENT_DIR + "/client.properties");
        }
        RedisSpec redis = spec.getRedis();
        boolean managedRedis = redis.getMode() != Mode.EXTERNAL;
        p.put("tbmq.redis.mode", managedRedis || redis.isCluster() ? "cluster" : "standalone");
        p.put("tbmq.redis.nodes", managedRedis ? redisSeeds(names) : String.join(",", redis.getNodes()));
        p.put("tbmq.redis.lettuce-batch-size", Integer.toString(plan.lettuceBatchSize().value()));
        PersistenceSpec persistence = broker.getPersistence() == null ? new PersistenceSpec() : broker.getPersistence();
        p.put("tbmq.persistence.device-messages-limit", Integer.toString(persistence.getDeviceMessagesLimit()));
        p.put("tbmq.persistence.device-message-ttl", persistence.getDeviceMessageTtl());
        p.put("tbmq.security.allow-anonymous", Boolean.toString(broker.isAllowAnonymous()));
        if (notBlank(broker.getCredentialsSecret())) {
            p.put("tbmq.security.credentials-file", CREDENTIALS_DIR + "/credentials.yaml");
        }
        ListenersSpec l = broker.getListeners() == null ? new ListenersSpec() : broker.getListeners();
        listener(p, "tcp", l.getMqtt(), null);
        listener(p, "tls", l.getMqtts(), broker.getTlsSecret());
        listener(p, "ws", l.getWs(), null);
        listener(p, "wss", l.getWss(), broker.getTlsSecret());
        if (broker.getConfig() != null) {
            new TreeMap<>(broker.getConfig()).forEach(p::put);
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
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            seeds.append(i == 0 ? "" : ",").append(names.redisHost(i)).append(':').append(RedisModel.PORT);
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
