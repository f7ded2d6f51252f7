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

    @Test
    void theLiveSettingsDocumentedAreTheOnesTheBrokerApplies() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "configuration.md"));
        String section = docs.substring(docs.indexOf("## Live settings"));
        section = section.substring(0, section.indexOf("\n## ", 3) < 0 ? section.length() : section.indexOf("\n## ", 3));
        List<String> documented = new ArrayList<>();
        for (String line : section.split("\n")) {
            if (line.startsWith("| `")) {
                documented.add(line.substring(3, line.indexOf('`', 3)));
            }
        }
        assertThat(documented).containsExactlyInAnyOrderElementsOf(io.tbmq.broker.app.BrokerApplication.LIVE_SETTINGS);
        // Every row of the tables above that is marked live names one of them, and every tbmq.* one is marked.
        List<String> marked = new ArrayList<>();
        for (String line : docs.substring(0, docs.indexOf("## Live settings")).split("\n")) {
            if (line.startsWith("| `") && line.contains("| **live**: ")) {
                marked.add(line.substring(3, line.indexOf('`', 3)));
            }
        }
        assertThat(marked).containsExactlyInAnyOrderElementsOf(documented.stream().filter(k -> k.startsWith("tbmq.")).toList());
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
