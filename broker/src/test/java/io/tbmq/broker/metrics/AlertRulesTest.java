package io.tbmq.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

/**
 * The alerting rules users load (config/monitoring/tbmq-alerts.yaml), checked with promtool, the
 * rule tool of Debian's prometheus package: they parse, every alert fires on the series it is
 * written for and only on those (src/test/resources/monitoring/tbmq-alerts-test.yaml), and every
 * series they select is scoped to the brokers' scrape job, which the operator renames per cluster.
 */
class AlertRulesTest {
    static final Path RULES = Path.of("..", "config", "monitoring", "tbmq-alerts.yaml");
    static final Path UNIT_TESTS = Path.of("src", "test", "resources", "monitoring", "tbmq-alerts-test.yaml");
    static final YAMLMapper YAML = new YAMLMapper();
    /** A series selector: a metric name, with or without its label matchers. */
    static final Pattern SELECTOR = Pattern.compile("\\b(up|(?:tbmq|jvm|process)_[a-z0-9_]+)\\b(\\{[^}]*})?");

    @Test
    void promtoolAcceptsTheRules() throws Exception {
        Result r = promtool("check", "rules", RULES.toAbsolutePath().toString());
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: " + alerts().size() + " rules found");
    }

    @Test
    void everyAlertFiresOnItsSeriesAndNotOnTheNearMisses() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "alert-rules"));
        // promtool compares annotations exactly; the rendered text is checked in MonitoringDashboardIT.
        JsonNode rules = YAML.readTree(RULES.toFile());
        for (JsonNode rule : rules.path("groups").get(0).path("rules")) {
            ((ObjectNode) rule).remove("annotations");
        }
        YAML.writeValue(dir.resolve("tbmq-alerts.yaml").toFile(), rules);
        Files.copy(UNIT_TESTS, dir.resolve("tbmq-alerts-test.yaml"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Result r = promtool("test", "rules", dir.resolve("tbmq-alerts-test.yaml").toAbsolutePath().toString());
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS");
        // Every alert has a test of its own.
        String tests = Files.readString(UNIT_TESTS);
        for (JsonNode alert : alerts()) {
            assertThat(tests).as("tests of %s", alert.path("alert").asText()).contains("alertname: " + alert.path("alert").asText());
        }
    }

    @Test
    void everySeriesTheAlertsSelectBelongsToTheBrokersJob() throws IOException {
        List<String> unscoped = new ArrayList<>();
        for (JsonNode alert : alerts()) {
            Matcher m = SELECTOR.matcher(alert.path("expr").asText());
            int selectors = 0;
            while (m.find()) {
                selectors++;
                if (m.group(2) == null || !m.group(2).contains("job=\"tbmq\"")) {
                    unscoped.add(alert.path("alert").asText() + ": " + m.group());
                }
            }
            assertThat(selectors).as("series selectors in %s", alert.path("alert").asText()).isPositive();
        }
        assertThat(unscoped).isEmpty();
    }

    @Test
    void everyAlertSaysHowBadAndWhatToDo() throws IOException {
        for (JsonNode alert : alerts()) {
            String name = alert.path("alert").asText();
            assertThat(name).startsWith("Tbmq");
            assertThat(alert.path("labels").path("severity").asText()).as(name).isIn(Set.of("critical", "warning"));
            assertThat(alert.path("annotations").path("summary").asText()).as(name).isNotBlank();
            assertThat(alert.path("annotations").path("description").asText()).as(name).hasSizeGreaterThan(80);
        }
    }

    static List<JsonNode> alerts() throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode group : YAML.readTree(RULES.toFile()).path("groups")) {
            group.path("rules").forEach(out::add);
        }
        assertThat(out).as("alerts in %s", RULES).hasSizeGreaterThanOrEqualTo(10);
        return out;
    }

    record Result(int exitCode, String output) {
    }

    static Result promtool(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("promtool"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool %s finished", String.join(" ", args)).isTrue();
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}
