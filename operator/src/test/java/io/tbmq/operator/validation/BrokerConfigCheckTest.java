package io.tbmq.operator.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

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
        config.put("tbmq.cluster.node-timeout", "15s");
        config.put("tbmq.cluster.heartbeat-interval", "1500ms");
        config.put("tbmq.cluster.downlink-retention", "1h30m");
        config.put("tbmq.persistence.application-topic-retention", "7d");
        config.put("tbmq.kafka.partition-move-wait", "PT2M");
        config.put("tbmq.shutdown.grace", "30");
        config.put("tbmq.listeners.tls.client-auth", "require");
        config.put("tbmq.listeners.wss.max-connections", "5000");
        config.put("tbmq.kafka.topic-prefix", "plant-7.");
        config.put("tbmq.kafka.properties.linger.ms", "5");
        config.put("tbmq.security.allow-anonymous", "true");
        config.put("tbmq.mqtt.max-keep-alive", "");
        config.put("quarkus.log.level", "anything Quarkus reads");

        assertThat(check(config)).isEmpty();
    }

    @Test
    void aValueTheBrokerCannotConvertIsRefusedNamingTheKeyAndWhatItTakes() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqtt.max-packet-size", "lots");
        config.put("tbmq.cluster.node-timeout", "ten seconds");
        config.put("tbmq.listeners.tls.client-auth", "mandatory");
        config.put("tbmq.kafka.replication-factor", "70000");

        assertThat(check(config)).extracting(FieldError::toString).containsExactly(
                "spec.broker.config[tbmq.cluster.node-timeout]: must be a duration such as 10s, 500ms, 5m, 2h, 1d or PT1H30M,"
                        + " not 'ten seconds'",
                "spec.broker.config[tbmq.kafka.replication-factor]: must be a whole number up to 32767, not '70000'",
                "spec.broker.config[tbmq.listeners.tls.client-auth]: must be one of NONE, OPTIONAL, REQUIRE, not 'mandatory'",
                "spec.broker.config[tbmq.mqtt.max-packet-size]: must be a whole number, not 'lots'");
    }

    @Test
    void aKeyTheBrokerDoesNotHaveIsRefusedRatherThanIgnored() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tbmq.mqt.max-keep-alive", "60");
        config.put("tbmq.listeners.mqtts.port", "8883");
        config.put("tbmq.kafka.properties", "linger.ms=5");

        assertThat(check(config)).extracting(FieldError::field).containsExactly("spec.broker.config[tbmq.kafka.properties]",
                "spec.broker.config[tbmq.listeners.mqtts.port]", "spec.broker.config[tbmq.mqt.max-keep-alive]");
        assertThat(check(config)).first().extracting(FieldError::message).asString()
                .contains("is not a setting of this broker version", "docs/configuration.md");
    }
}
