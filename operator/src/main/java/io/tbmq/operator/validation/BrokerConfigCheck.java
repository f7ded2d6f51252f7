package io.tbmq.operator.validation;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Checks spec.broker.config against the broker's own settings (broker-settings.tsv, made from the
 * broker's configuration by its SettingsCatalogTest). Without it a misspelt key reaches the brokers
 * as an environment variable they ignore, and a value they cannot convert rolls the first broker pod
 * into a crash loop. Only {@code tbmq.*} keys are checked; Quarkus' own ({@code quarkus.*}) go through
 * as they are. A check may accept what the broker refuses, never the other way round.
 */
public final class BrokerConfigCheck {
    static final String CATALOG = "broker-settings.tsv";
    /** The listener names in keys such as tbmq.listeners.tcp.port (the catalog writes them {@code <l>}). */
    private static final String LISTENERS = "(tcp|tls|ws|wss)";
    private static final Pattern SECONDS = Pattern.compile("[-+]?\\d+");
    private static final Pattern WITH_SUFFIX = Pattern.compile("([-+]?\\d+)(ms|d)");
    private static final Map<Pattern, String> SETTINGS = load();

    private BrokerConfigCheck() {
    }

    public static void check(Map<String, String> config, List<FieldError> errors) {
        if (config == null) {
            return;
        }
        new TreeMap<>(config).forEach((key, value) -> {
            if (key == null || !key.startsWith("tbmq.")) {
                return;
            }
            String field = "spec.broker.config[" + key + "]";
            String type = typeOf(key);
            if (type == null) {
                errors.add(new FieldError(field, "is not a setting of this broker version (docs/configuration.md lists them);"
                        + " the brokers would ignore it"));
                return;
            }
            String problem = problem(type, value == null ? "" : value.strip());
            if (problem != null) {
                errors.add(new FieldError(field, problem + ", not '" + value + "'"));
            }
        });
    }

    static String typeOf(String key) {
        for (Map.Entry<Pattern, String> e : SETTINGS.entrySet()) {
            if (e.getKey().matcher(key).matches()) {
                return e.getValue();
            }
        }
        return null;
    }

    /** What is wrong with {@code value} as a {@code type}, or null. */
    static String problem(String type, String value) {
        if (value.isEmpty()) {
            return null; // the broker takes an empty value for none: its default
        }
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
                String regex = key.endsWith(".*") ? Pattern.quote(key.substring(0, key.length() - 1)) + ".+" : Pattern.quote(key);
                out.put(Pattern.compile(regex.replace("<l>", "\\E" + LISTENERS + "\\Q")), parts[1]);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("reading " + CATALOG, e);
        }
    }
}
