package io.tbmq.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The operator checks a TbmqCluster's spec.broker.config against a catalog of the broker's settings
 * and their types, so that a misspelt key or a value the broker cannot convert is refused before any
 * broker pod rolls. The catalog is made from {@link BrokerConfig} here and cannot drift from it:
 * {@code -Dtbmq.update-manifests=true} (make manifests) writes it anew.
 */
class SettingsCatalogTest {
    static final Path CATALOG = Path.of("..", "operator", "src", "main", "resources", "io", "tbmq", "operator", "validation",
            "broker-settings.tsv");

    @Test
    void theOperatorsCatalogOfBrokerSettingsIsTheBrokersConfiguration() throws IOException {
        Map<String, String> settings = new TreeMap<>();
        collect(BrokerConfig.class, "tbmq", settings);
        String expected = "# key\ttype (? where an empty value means none): made from the broker's configuration by SettingsCatalogTest (make manifests), read by the operator\n"
                + settings.entrySet().stream().map(e -> e.getKey() + "\t" + e.getValue() + "\n").collect(Collectors.joining());
        if (Boolean.getBoolean("tbmq.update-manifests")) {
            Files.createDirectories(CATALOG.getParent());
            Files.writeString(CATALOG, expected);
        }
        assertThat(settings).containsEntry("tbmq.mqtt.max-packet-size", "int").containsEntry("tbmq.cluster.node-timeout", "duration")
                .containsEntry("tbmq.listeners.<l>.client-auth", "enum:NONE|OPTIONAL|REQUIRE").containsEntry("tbmq.kafka.properties.*", "text?")
                .containsEntry("tbmq.kafka.topic-prefix", "text?");
        assertThat(Files.exists(CATALOG) ? Files.readString(CATALOG) : "").as(CATALOG + " (make manifests writes it)")
                .isEqualTo(expected);
    }

    private static void collect(Class<?> type, String prefix, Map<String, String> out) {
        for (Method m : type.getDeclaredMethods()) {
            if (m.isDefault() || m.isSynthetic() || java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            // Keys this walk would name wrongly: renamed, flattened, or groups it would take for one value.
            assertThat(m.isAnnotationPresent(io.smallrye.config.WithName.class) || m.isAnnotationPresent(io.smallrye.config.WithParentName.class))
                    .as("%s: the catalog does not follow @WithName or @WithParentName yet", m).isFalse();
            assertThat(m.getGenericReturnType() instanceof ParameterizedType p
                    && p.getActualTypeArguments()[0] instanceof Class<?> c && c.isInterface() && c.getPackage() == BrokerConfig.class.getPackage())
                    .as("%s: the catalog does not follow optional or repeated groups yet", m).isFalse();
            String key = prefix + "." + kebab(m.getName());
            Class<?> returned = m.getReturnType();
            if (returned == ListenersConfig.Listener.class) {
                collect(returned, prefix + ".<l>", out);
            } else if (returned.isInterface() && returned.getPackage() == BrokerConfig.class.getPackage()) {
                collect(returned, key, out);
            } else if (Map.class.isAssignableFrom(returned)) {
                out.put(key + ".*", "text?");
            } else {
                out.put(key, typeOf(m.getGenericReturnType()) + (optional(m.getGenericReturnType()) ? "?" : ""));
            }
        }
    }

    /** Whether the broker takes an empty value for none; a required key with one stops its start (SRCFG00040). */
    private static boolean optional(Type type) {
        return type == java.util.OptionalInt.class || type == java.util.OptionalLong.class
                || type instanceof ParameterizedType p && p.getRawType() == java.util.Optional.class;
    }

    /** What the operator checks a value against; "text" for anything the broker takes as it comes. */
    private static String typeOf(Type type) {
        if (type instanceof ParameterizedType p && p.getRawType() == java.util.Optional.class) {
            return typeOf(p.getActualTypeArguments()[0]);
        }
        if (type == java.util.OptionalInt.class) {
            return "int";
        }
        if (type == java.util.OptionalLong.class) {
            return "long";
        }
        if (type == int.class || type == Integer.class || type == short.class || type == Short.class) {
            return type == short.class || type == Short.class ? "short" : "int";
        }
        if (type == long.class || type == Long.class) {
            return "long";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "boolean";
        }
        if (type == Duration.class) {
            return "duration";
        }
        if (type instanceof Class<?> c && c.isEnum()) {
            return "enum:" + Arrays.stream(c.getEnumConstants()).map(v -> ((Enum<?>) v).name()).collect(Collectors.joining("|"));
        }
        return "text";
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }
}
