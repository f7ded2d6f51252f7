package io.tbmq.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** docs/configuration.md documents every key of {@link BrokerConfig}: it cannot drift from the code. */
class ConfigurationDocsTest {

    @Test
    void everyConfigurationKeyIsDocumented() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "configuration.md"));
        List<String> keys = new ArrayList<>();
        collect(BrokerConfig.class, "tbmq", keys);
        assertThat(keys).hasSizeGreaterThan(40);
        assertThat(keys).allSatisfy(key -> assertThat(docs).as("docs/configuration.md").contains("`" + key));
    }

    private static void collect(Class<?> type, String prefix, List<String> out) {
        for (Method m : type.getDeclaredMethods()) {
            if (m.isDefault() || m.isSynthetic() || java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            String key = prefix + "." + kebab(m.getName());
            Class<?> returned = m.getReturnType();
            if (returned == ListenersConfig.Listener.class) {
                collect(returned, prefix + ".<l>", out);
            } else if (returned.isInterface() && returned.getPackage() == BrokerConfig.class.getPackage()) {
                collect(returned, key, out);
            } else if (Map.class.isAssignableFrom(returned)) {
                out.add(key + ".*");
            } else {
                out.add(key);
            }
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }
}
