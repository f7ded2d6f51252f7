package io.tbmq.broker.live;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Log levels changed while the broker runs: {@code quarkus.log.level} (the root) and
 * {@code quarkus.log.category."NAME".level}, the same keys Quarkus reads at start. Levels below
 * Quarkus's build-time minimum ({@code DEBUG}) are accepted but print nothing more.
 */
public final class LogLevels {
    /** The keys this applies: the root level and any category's. */
    public static final Pattern KEY = Pattern.compile("quarkus\\.log\\.level|quarkus\\.log\\.category\\.\"?([^\"]+?)\"?\\.level");

    private LogLevels() {
    }

    /** Sets the level {@code key} names; an unknown level name is an IllegalArgumentException and nothing changes. */
    public static void apply(String key, String value) {
        Matcher m = KEY.matcher(key);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a log level key: " + key);
        }
        String category = m.group(1) == null ? "" : m.group(1);
        java.util.logging.Level level = org.jboss.logmanager.Level.parse(value.trim().toUpperCase(Locale.ROOT));
        java.util.logging.Logger.getLogger(category).setLevel(level);
    }
}
