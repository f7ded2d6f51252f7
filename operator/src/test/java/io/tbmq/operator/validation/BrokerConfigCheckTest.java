package io.tbmq.operator.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.tbmq.operator.api.TbmqCluster;
import io.tbmq.operator.desired.BrokerSettings;
import io.tbmq.operator.desired.Names;
import io.tbmq.operator.desired.Samples;
import io.tbmq.operator.sizing.SizingModel;

class BrokerConfigCheckTest {

    private static List<FieldError> check(Map<String, String> config) {
        List<FieldError> errors = new ArrayList<>();
        BrokerConfigCheck.check(config, errors);
        return errors;
    }

    @Test
    void valuesTheBrokerReadsPass() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqtt.max-packet-size", "65536");
        config.put("tbmq.mqtt.max-keep-alive", "+60");
        config.put("tbmq.cluster.node-timeout", "15s");
        config.put("tbmq.cluster.heartbeat-interval", "1500MS");
        config.put("tbmq.cluster.downlink-retention", "1h30m");
        config.put("tbmq.persistence.application-topic-retention", "7D");
        config.put("tbmq.kafka.partition-move-wait", "PT2M");
        config.put("tbmq.shutdown.grace", "30");
        config.put("tbmq.shutdown.acknowledgement-wait", "1.5s");
        config.put("tbmq.listeners.tls.client-auth", "require");
        config.put("tbmq.listeners.wss.max-connections", "5000");
        config.put("tbmq.listeners.tcp.port", "${MQTT_PORT:1883}");
        config.put("tbmq.kafka.topic-prefix", "");
        config.put("tbmq.kafka.properties.linger.ms", "5");
        config.put("tbmq.security.allow-anonymous", "true");
        config.put("quarkus.log.level", "anything Quarkus reads");

        assertThat(check(config)).isEmpty();
        assertThat(BrokerConfigCheck.unknown(config)).isEmpty();
    }

    @Test
    void aValueTheBrokerCannotConvertIsRefusedNamingTheKeyAndWhatItTakes() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqtt.max-packet-size", "lots");
        config.put("tbmq.cluster.node-timeout", "ten seconds");
        config.put("tbmq.listeners.tls.client-auth", "mandatory");
        config.put("tbmq.kafka.replication-factor", "70000");
        config.put("tbmq.mqtt.max-keep-alive", "");
        // Another spelling of a key reaches the brokers as the same environment variable.
        config.put("tbmq.mqtt.max_inflight_to_client", "many");
        // As is the variable's own name.
        config.put("TBMQ_SHUTDOWN_GRACE", "soon");

        assertThat(check(config)).extracting(FieldError::toString).containsExactly(
                "spec.broker.config[TBMQ_SHUTDOWN_GRACE]: must be a duration such as 10s, 500ms, 5m, 2h, 1d or PT1H30M, not 'soon'",
                "spec.broker.config[tbmq.cluster.node-timeout]: must be a duration such as 10s, 500ms, 5m, 2h, 1d or PT1H30M,"
                        + " not 'ten seconds'",
                "spec.broker.config[tbmq.kafka.replication-factor]: must be a whole number up to 32767, not '70000'",
                "spec.broker.config[tbmq.listeners.tls.client-auth]: must be one of NONE, OPTIONAL, REQUIRE, not 'mandatory'",
                "spec.broker.config[tbmq.mqtt.max-keep-alive]: must not be empty (leave the key out for the broker's default)",
                "spec.broker.config[tbmq.mqtt.max-packet-size]: must be a whole number, not 'lots'",
                "spec.broker.config[tbmq.mqtt.max_inflight_to_client]: must be a whole number, not 'many'");
    }

    @Test
    void aKeyTheBrokerDoesNotHaveIsReportedNotRefused() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqt.max-keep-alive", "60");
        config.put("tbmq.listeners.mqtts.port", "8883");
        config.put("tbmq.kafka.properties", "linger.ms=5");
        config.put("tbmq.listeners.TCP.port", "1884");
        config.put("TBMQ_MQT_MAX_KEEP_ALIVE", "60");
        config.put("QUARKUS_LOG_LEVEL", "DEBUG");

        assertThat(check(config)).as("a cluster running with one works").isEmpty();
        assertThat(BrokerConfigCheck.unknown(config)).containsExactly("TBMQ_MQT_MAX_KEEP_ALIVE", "tbmq.kafka.properties", "tbmq.listeners.mqtts.port",
                "tbmq.mqt.max-keep-alive");
    }

    @Test
    void whitespaceIsTextToTheBrokerAndNothingToANumber() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqtt.response-information", " ");
        config.put("tbmq.kafka.producer-acks", " all ");
        config.put("tbmq.mqtt.max-packet-size", " 65536 ");
        config.put("tbmq.cluster.node-timeout", " 15s");
        config.put("tbmq.listeners.tls.client-auth", "require ");
        assertThat(check(config)).as("SmallRye keeps text as it is and trims the rest").isEmpty();

        config.put("tbmq.mqtt.max-keep-alive", "  ");
        config.put("tbmq.security.allow-anonymous", " ");
        assertThat(check(config)).extracting(FieldError::toString).containsExactly(
                "spec.broker.config[tbmq.mqtt.max-keep-alive]: must not be empty (leave the key out for the broker's default)",
                "spec.broker.config[tbmq.security.allow-anonymous]: must not be empty (leave the key out for the broker's default)");
    }

    /** The brokers' environment as the operator builds it for a TbmqCluster with this spec.broker.config. */
    private static Map<String, String> environment(Map<String, String> config) {
        TbmqCluster c = Samples.load("tbmq-dev.yaml", "iot");
        c.getSpec().getBroker().setConfig(config);
        return BrokerSettings.environment(BrokerSettings.properties(c, SizingModel.plan(c.getSpec()),
                new Names(c.getMetadata().getName(), "iot")));
    }

    @Test
    void ofTwoSpellingsOfOneKeyOnlyTheValueTheBrokersReceiveIsChecked() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqtt.max-packet-size", "lots");
        config.put("tbmq.mqtt.max_packet_size", "100");
        assertThat(environment(config)).containsEntry("TBMQ_MQTT_MAX_PACKET_SIZE", "100");
        assertThat(check(config)).isEmpty();

        config.put("tbmq.mqtt.max-packet-size", "100");
        config.put("tbmq.mqtt.max_packet_size", "lots");
        assertThat(environment(config)).containsEntry("TBMQ_MQTT_MAX_PACKET_SIZE", "lots");
        assertThat(check(config)).extracting(FieldError::toString)
                .containsExactly("spec.broker.config[tbmq.mqtt.max_packet_size]: must be a whole number, not 'lots'");

        config.put("TBMQ_MQTT_MAX_PACKET_SIZE", "lots");
        assertThat(check(config)).as("TBMQ_ sorts before tbmq.: the latter wins").extracting(FieldError::toString)
                .containsExactly("spec.broker.config[tbmq.mqtt.max_packet_size]: must be a whole number, not 'lots'");
        config.put("tbmq.mqtt.max_packet_size", "100");
        assertThat(environment(config)).containsEntry("TBMQ_MQTT_MAX_PACKET_SIZE", "100");
        assertThat(check(config)).isEmpty();
    }

    @Test
    void aKeyTheOperatorSetsToo() {
        // The operator writes tbmq.persistence.device-messages-limit from spec.broker.persistence; a key of
        // the same spelling replaces it, and another spelling still wins only if it sorts last.
        Map<String, String> config = new LinkedHashMap<>();
        config.put("TBMQ_PERSISTENCE_DEVICE_MESSAGES_LIMIT", "500");
        config.put("tbmq.persistence.device-messages-limit", "lots");
        assertThat(environment(config)).containsEntry("TBMQ_PERSISTENCE_DEVICE_MESSAGES_LIMIT", "lots");
        assertThat(check(config)).extracting(FieldError::toString).containsExactly(
                "spec.broker.config[tbmq.persistence.device-messages-limit]: must be a whole number, not 'lots'");

        config.put("TBMQ_PERSISTENCE_DEVICE_MESSAGES_LIMIT", "lots");
        config.put("tbmq.persistence.device-messages-limit", "500");
        assertThat(environment(config)).containsEntry("TBMQ_PERSISTENCE_DEVICE_MESSAGES_LIMIT", "500");
        assertThat(check(config)).isEmpty();
    }

    @Test
    void aSettingThePodSetsItselfIsNeitherCheckedNorUnknown() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.node-id", "");
        config.put("TBMQ_CLUSTER_NAME", "other");
        config.put("TBMQ_VERSION", "1.0");
        assertThat(check(config)).as("the pod's own variables win over the ConfigMap's").isEmpty();
        assertThat(BrokerConfigCheck.setByThePod(config)).containsExactly("TBMQ_CLUSTER_NAME", "tbmq.node-id");
        assertThat(BrokerConfigCheck.unknown(config)).isEmpty();
    }

    @Test
    void aRedisPasswordInTheConfigIsTheSecretsWhereThereIsOne() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.redis.password", "in plain sight");
        config.put("TBMQ_REDIS_MODE", "cluster");
        assertThat(BrokerConfigCheck.redisPasswordFromTheSecret(config, true)).containsExactly("tbmq.redis.password");
        assertThat(BrokerConfigCheck.redisPasswordFromTheSecret(config, false)).as("an external Redis without a Secret").isEmpty();
        assertThat(BrokerConfigCheck.setByThePod(config)).isEmpty();
        assertThat(check(config)).isEmpty();
    }

    @Test
    void aLiveSettingInItsOwnSpellingCountsWhereNoOtherSpellingIsGiven() {
        // tbmq.redis.lettuce-batch-size goes to the live settings file, read below the environment.
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.redis.lettuce-batch-size", "many");
        assertThat(check(config)).extracting(FieldError::toString)
                .containsExactly("spec.broker.config[tbmq.redis.lettuce-batch-size]: must be a whole number, not 'many'");

        config.put("tbmq.redis.lettuce_batch_size", "100");
        assertThat(check(config)).as("the environment's value is the one the brokers convert").isEmpty();
    }
}
