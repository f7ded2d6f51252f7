package io.tbmq.broker.testing;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.tbmq.broker.config.BrokerConfig;

/** A {@link BrokerConfig} from the documented defaults plus overrides, without Quarkus. */
public final class TestConfig {
    private TestConfig() {
    }

    public static BrokerConfig of(Map<String, String> overrides) {
        Map<String, String> values = new HashMap<>();
        values.put("tbmq.security.auth-threads", "0");
        values.putAll(overrides);
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withMapping(BrokerConfig.class)
                // Quarkus's "10s"-style durations, as in the application
                .withConverter(Duration.class, 100, new DurationConverter())
                .withSources(new PropertiesConfigSource(values, "test", 500))
                .build();
        return config.getConfigMapping(BrokerConfig.class);
    }
}
