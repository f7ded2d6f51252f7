package io.tbmq.operator.validation;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import io.tbmq.operator.desired.BrokerModel;
import io.tbmq.operator.desired.BrokerSettings;

/**
 * Checks spec.broker.config against the broker's own settings (broker-settings.tsv, made from the
 * broker's configuration by its SettingsCatalogTest). A value the broker cannot convert would roll the
 * first broker pod into a crash loop: it is refused ({@link #check}). A key the broker does not have
 * would be ignored by the brokers: it is reported, never refused ({@link #unknown}), since a cluster
 * running with one works, and a pinned broker image may be of another version than the catalog.
 * <p>
 * Keys are compared in the form the brokers receive them, as environment variables
 * (tbmq.mqtt.max_packet_size reaches them as TBMQ_MQTT_MAX_PACKET_SIZE too). Only keys of that variable's
 * {@code TBMQ_} namespace are checked; Quarkus' own (quarkus.*) are not. A check may accept what the broker refuses, never the other way round.
 */
public final class BrokerConfigCheck {
    static final String CATALOG = "broker-settings.tsv";
    /** The listener names in keys such as tbmq.listeners.tcp.port (the catalog writes them {@code <l>}). */
    private static final String LISTENERS = "(TCP|TLS|WS|WSS)";
    private static final Pattern SECONDS = Pattern.compile("[-+]?\\d+");
    private static final Pattern WITH_SUFFIX = Pattern.compile("[-+]?\\d+(ms|d)", Pattern.CASE_INSENSITIVE);
    private static final String TEXT = "text";
    /** Variables the broker reads itself rather than through its configuration (the image's version). */
    private static final java.util.Set<String> READ_DIRECTLY = java.util.Set.of("TBMQ_VERSION");
    private static final Map<Pattern, String> SETTINGS = load();

    private BrokerConfigCheck() {
    }

    /** Values of known keys the broker could not read, as errors. */
    public static void check(Map<String, String> config, List<FieldError> errors) {
        if (config == null) {
            return;
        }
        received(config).forEach((key, value) -> {
            String type = typeOf(key);
            if (type == null) {
                return;
            }
            boolean optional = type.endsWith("?");
            String base = optional ? type.substring(0, type.length() - 1) : type;
            // SmallRye trims numbers, durations, enums and booleans before converting them, never text.
            String v = value == null ? "" : TEXT.equals(base) ? value : value.strip();
            if (v.contains("${")) {
                return; // an expression the broker expands at start
            }
            String problem = v.isEmpty() ? (optional ? null : "must not be empty (leave the key out for the broker's default)")
                    : problem(base, v);
            if (problem != null) {
                errors.add(new FieldError("spec.broker.config[" + key + "]", problem + (v.isEmpty() ? "" : ", not '" + value + "'")));
            }
        });
    }

    /**
     * The entries of the {@code TBMQ_} namespace whose values reach the brokers. Spellings of one key
     * share an environment variable, which gets the value of the one sorting last
     * (BrokerSettings.environment). A live setting in its own spelling goes to the live settings file,
     * which the brokers read at start below the environment and apply later only where it converts: it
     * counts where no other spelling sets the variable. Variables the pod sets itself never come from here.
     */
    private static Map<String, String> received(Map<String, String> config) {
        Map<String, String> byVariable = new TreeMap<>();
        Map<String, String> liveByVariable = new TreeMap<>();
        new TreeMap<>(config).keySet().forEach(key -> {
            if (!isBrokerSetting(key) || BrokerModel.POD_VARIABLES.contains(envName(key))) {
                return;
            }
            (BrokerSettings.isLive(key) ? liveByVariable : byVariable).put(envName(key), key);
        });
        liveByVariable.forEach(byVariable::putIfAbsent);
        Map<String, String> out = new TreeMap<>();
        byVariable.values().forEach(key -> out.put(key, config.get(key)));
        return out;
    }

    /** Keys of settings each broker's pod sets itself (its node id, ...): the brokers never see these values. */
    public static List<String> setByThePod(Map<String, String> config) {
        return keys(config, k -> BrokerModel.POD_VARIABLES.contains(envName(k)));
    }

    /**
     * Keys of the Redis password, which each broker's pod sets from the password Secret when there is
     * one ({@code fromSecret}: a managed Redis, or spec.redis.passwordSecret): the brokers never see these values.
     */
    public static List<String> redisPasswordFromTheSecret(Map<String, String> config, boolean fromSecret) {
        return fromSecret ? keys(config, k -> BrokerModel.REDIS_PASSWORD.equals(envName(k))) : List.of();
    }

    private static List<String> keys(Map<String, String> config, java.util.function.Predicate<String> which) {
        List<String> out = new ArrayList<>();
        if (config != null) {
            new TreeMap<>(config).keySet().stream().filter(k -> isBrokerSetting(k) && which.test(k)).forEach(out::add);
        }
        return out;
    }

    /** Keys of the {@code TBMQ_} namespace that are not settings of the broker version this operator was built with. */
    public static List<String> unknown(Map<String, String> config) {
        List<String> out = new ArrayList<>();
        if (config != null) {
            new TreeMap<>(config).keySet().stream().filter(k -> isBrokerSetting(k) && typeOf(k) == null && !READ_DIRECTLY.contains(envName(k))).forEach(out::add);
        }
        return out;
    }

    /** A key the brokers receive as a TBMQ_* environment variable, in any spelling (tbmq.mqtt.x, TBMQ_MQTT_X). */
    private static boolean isBrokerSetting(String key) {
        return key != null && envName(key).startsWith("TBMQ_");
    }

    static String typeOf(String key) {
        String env = envName(key);
        for (Map.Entry<Pattern, String> e : SETTINGS.entrySet()) {
            if (e.getKey().matcher(env).matches()) {
                return e.getValue();
            }
        }
        return null;
    }

    /** As the operator names a setting's environment variable (BrokerSettings.envName). */
    private static String envName(String key) {
        return key.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(Locale.ROOT);
    }

    /** What is wrong with a non-empty {@code value} as a {@code type}, or null. */
    static String problem(String type, String value) {
        switch (type) {
            case "int":
                return fits(value, Integer.MIN_VALUE, Integer.MAX_VALUE) ? null : "must be a whole number";
            case "short":
                return fits(value, Short.MIN_VALUE, Short.MAX_VALUE) ? null : "must be a whole number up to " + Short.MAX_VALUE;
            case "long":
                return fits(value, Long.MIN_VALUE, Long.MAX_VALUE) ? null : "must be a whole number";
            case "duration":
                return duration(value) ? null : "must be a duration such as 10s, 500ms, 5m, 2h, 1d or PT1H30M";
            default:
                if (type.startsWith("enum:")) {
                    List<String> allowed = List.of(type.substring("enum:".length()).split("\\|"));
                    String normalized = value.replace('-', '_').toUpperCase(Locale.ROOT);
                    return allowed.contains(normalized) ? null : "must be one of " + String.join(", ", allowed);
                }
                return null; // text, and booleans: SmallRye takes anything it does not know for false
        }
    }

    private static boolean fits(String value, long min, long max) {
        try {
            long v = Long.parseLong(value);
            return v >= min && v <= max;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The forms the broker's converter takes: seconds as a bare number, a number with ms or d, or ISO-8601 with or without PT. */
    static boolean duration(String value) {
        if (SECONDS.matcher(value).matches() || WITH_SUFFIX.matcher(value).matches()) {
            return true;
        }
        for (String candidate : List.of(value, "PT" + value)) {
            try {
                Duration.parse(candidate);
                return true;
            } catch (DateTimeParseException e) {
                // the other form
            }
        }
        return false;
    }

    private static Map<Pattern, String> load() {
        try (InputStream in = BrokerConfigCheck.class.getResourceAsStream(CATALOG)) {
            if (in == null) {
                throw new IllegalStateException(CATALOG + " is missing from the operator's class path");
            }
            Map<Pattern, String> out = new LinkedHashMap<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] parts = line.split("\t");
                String key = parts[0];
                boolean map = key.endsWith(".*");
                String[] pieces = (map ? key.substring(0, key.length() - 1) : key).split("<l>", -1);
                List<String> quoted = new ArrayList<>();
                for (String piece : pieces) {
                    quoted.add(Pattern.quote(envName(piece)));
                }
                out.put(Pattern.compile(String.join(LISTENERS, quoted) + (map ? ".+" : "")), parts[1]);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("reading " + CATALOG, e);
        }
    }
}
