package io.tbmq.broker.live;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import org.jboss.logging.Logger;

/**
 * Settings a running broker takes over without a restart: a properties file (in Kubernetes a
 * ConfigMap the operator writes, mounted as a volume, which the kubelet refreshes in place) is read
 * again when it changes, and each setting whose value changed is handed to what applies it. The
 * file is also a configuration source at start, so a restarted broker starts with the same values.
 * A value that cannot be applied is logged and left as it was.
 */
public final class LiveSettings {
    private static final Logger LOG = Logger.getLogger(LiveSettings.class);

    private final Path file;
    private final Map<String, Consumer<String>> appliers = new LinkedHashMap<>();
    private final Map<Pattern, BiConsumer<String, String>> patternAppliers = new LinkedHashMap<>();
    private Map<String, String> applied = new HashMap<>();
    private String lastContent;

    public LiveSettings(Path file) {
        this.file = file;
    }

    /** {@code applier} receives the new value of {@code key} each time it changes. */
    public LiveSettings on(String key, Consumer<String> applier) {
        appliers.put(key, applier);
        return this;
    }

    /**
     * {@code applier} receives key and new value of every key matching {@code pattern} whose value changes, and
     * of every matching key already in the file at {@link #baseline()}: for a key the broker's own
     * application.properties also sets (a log category), Quarkus may have preferred that value at start.
     */
    public LiveSettings onMatching(Pattern pattern, BiConsumer<String, String> applier) {
        patternAppliers.put(pattern, applier);
        return this;
    }

    /** Takes the file's current values as the ones the broker started with. */
    public synchronized LiveSettings baseline() {
        String content = read();
        lastContent = content;
        applied = new HashMap<>();
        Map<String, String> now = parse(content);
        applyMatching(now);
        applied.putAll(now);
        return this;
    }

    /** Reads the file; applies what changed since the last look. Safe to call from a timer. */
    public synchronized void refresh() {
        String content = read();
        if (content == null || content.equals(lastContent)) {
            return;
        }
        lastContent = content;
        Map<String, String> now = parse(content);
        for (Map.Entry<String, Consumer<String>> e : appliers.entrySet()) {
            apply(e.getKey(), now.get(e.getKey()), e.getValue());
        }
        applyMatching(now);
    }

    private void applyMatching(Map<String, String> now) {
        for (Map.Entry<Pattern, BiConsumer<String, String>> e : patternAppliers.entrySet()) {
            new java.util.TreeMap<>(now).forEach((key, value) -> {
                if (e.getKey().matcher(key).matches()) {
                    apply(key, value, v -> e.getValue().accept(key, v));
                }
            });
        }
    }

    /** A key removed from the file keeps its last value until the next start. */
    private void apply(String key, String value, Consumer<String> applier) {
        if (value == null || value.equals(applied.get(key))) {
            return;
        }
        try {
            applier.accept(value);
            applied.put(key, value);
            LOG.infof("applied %s=%s without a restart (from %s)", key, value, file);
        } catch (RuntimeException ex) {
            LOG.warnf("could not apply %s=%s from %s: %s; the previous value stays", key, value, file, ex.getMessage());
        }
    }

    private String read() {
        try {
            return Files.readString(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            LOG.debugf("cannot read %s: %s", file, e.getMessage());
            return null;
        }
    }

    private static Map<String, String> parse(String content) {
        Map<String, String> out = new HashMap<>();
        if (content == null) {
            return out;
        }
        Properties p = new Properties();
        try {
            p.load(new StringReader(content));
        } catch (IOException e) {
            return out;
        }
        p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k).trim()));
        return out;
    }
}
