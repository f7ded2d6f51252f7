package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.tbmq.localstack.BrokerNode;
import io.tbmq.localstack.ManagedProcess;
import io.tbmq.localstack.Ports;
import io.tbmq.localstack.ProcessLauncher;

/**
 * The Grafana dashboard (config/grafana/tbmq-brokers.json) and the alerting rules
 * (config/monitoring/tbmq-alerts.yaml) against a real broker: every metric they name must be
 * exported by /q/metrics, and every dashboard query must return data from a real Prometheus
 * (Debian's package) scraping the broker while persistent DEVICE sessions carry QoS 1 traffic.
 * That Prometheus evaluates the rules too: none may go off for the healthy broker (over several
 * evaluations), and a second target of the brokers' job where nothing listens must be caught as a
 * broker down. The range data
 * goes to target/monitoring/dashboard-data.json, from which scripts/render-dashboard.py draws the
 * picture in docs/operations.md.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MonitoringDashboardIT {
    static final Path DASHBOARD = Path.of("..", "config", "grafana", "tbmq-brokers.json");
    static final Path ALERTS = Path.of("..", "config", "monitoring", "tbmq-alerts.yaml");
    /** A series an alert selects: the metric name and its matchers. */
    static final Pattern SELECTED = Pattern.compile("\\b((?:tbmq|jvm|process)_[a-z0-9_]+)\\{");
    /** Names of exported series a query can refer to; the suffixes are those of histograms and counters. */
    static final Pattern METRIC = Pattern.compile("\\b((?:tbmq|jvm|process)_[a-z0-9_]+)\\b");
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    static BrokerNode broker;
    /** What Grafana makes of $__rate_interval at a 1 s scrape interval: four scrapes, and a little more. */
    private static final String RATE_INTERVAL = "5s";

    static ManagedProcess prometheus;
    static int prometheusPort;
    /** A target of the brokers' job where nothing listens: a broker that is down. */
    static String deadBroker;
    static long trafficStart;
    static long trafficEnd;

    @BeforeAll
    static void startPrometheusAndTraffic() throws Exception {
        broker = ItStack.get().broker();
        Path dir = Path.of("target", "monitoring").toAbsolutePath();
        deleteRecursively(dir.resolve("data")); // an earlier run's series would show in the picture
        Files.createDirectories(dir);
        prometheusPort = Ports.free();
        deadBroker = "127.0.0.1:" + Ports.free();
        Files.writeString(dir.resolve("prometheus.yml"), String.join("\n",
                "global:",
                "  scrape_interval: 1s",
                "  evaluation_interval: 1s",
                "rule_files:",
                "  - " + ALERTS.toAbsolutePath().normalize(),
                "scrape_configs:",
                "  - job_name: tbmq", // the job the rules name (the operator renames it per cluster)
                "    metrics_path: /q/metrics",
                "    static_configs:",
                "      - targets: ['127.0.0.1:" + broker.httpPort() + "', '" + deadBroker + "']",
                ""));
        prometheus = ProcessLauncher.get().start("prometheus", List.of("prometheus", "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + prometheusPort), dir, Map.of());
        Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
                .until(() -> prometheusGet("/api/v1/targets").contains("\"health\":\"up\""));
        trafficStart = System.currentTimeMillis() / 1000;
        runTraffic();
        trafficEnd = System.currentTimeMillis() / 1000;
    }

    private static void deleteRecursively(Path path) throws java.io.IOException {
        if (Files.exists(path)) {
            try (var paths = Files.walk(path)) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @AfterAll
    static void stop() {
        if (prometheus != null) {
            prometheus.stop(Duration.ofSeconds(10));
        }
    }

    /**
     * Persistent DEVICE subscribers with QoS 1 (Redis scripts store, load and remove their messages),
     * one of them away for a while so its messages wait in Redis, and a publisher at about 200 msg/s.
     */
    private static void runTraffic() throws Exception {
        List<Mqtt5BlockingClient> subscribers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            subscribers.add(subscriber(i));
        }
        Mqtt5AsyncClient publisher = Clients.alice5(broker, "mon-pub").toAsync();
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(20);
        int n = 0;
        boolean away = false;
        boolean back = false;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 4; i++) {
                publisher.publishWith().topic("mon/" + i).qos(MqttQos.AT_LEAST_ONCE).payload(("m" + n).getBytes()).send();
            }
            n++;
            long elapsed = System.nanoTime() - start;
            if (!away && elapsed > TimeUnit.SECONDS.toNanos(5)) {
                subscribers.get(0).disconnect();
                away = true;
            } else if (away && !back && elapsed > TimeUnit.SECONDS.toNanos(12)) {
                subscribers.set(0, subscriber(0));
                back = true;
            }
            Thread.sleep(20);
        }
        publisher.disconnect().get(10, TimeUnit.SECONDS);
        for (Mqtt5BlockingClient s : subscribers) {
            s.disconnect();
        }
        Thread.sleep(3_000); // two more scrapes after the traffic
    }

    private static Mqtt5BlockingClient subscriber(int i) {
        Mqtt5BlockingClient c = Clients.v5(broker, "mon-sub-" + i).buildBlocking();
        c.connectWith().cleanStart(false).sessionExpiryInterval(600).simpleAuth().username("alice")
                .password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send();
        c.toAsync().subscribeWith().topicFilter("mon/" + i).qos(MqttQos.AT_LEAST_ONCE).callback(p -> {
        }).send().join();
        return c;
    }

    @Test
    @Order(1)
    void everyMetricTheDashboardQueriesIsExported() throws IOException {
        Set<String> queried = new TreeSet<>();
        for (String expr : queries().keySet()) {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                queried.add(m.group(1));
            }
        }
        assertThat(queried).as("metrics the dashboard queries").hasSizeGreaterThanOrEqualTo(16);
        assertThat(exported()).as("/q/metrics").containsAll(queried);
    }

    @Test
    @Order(2)
    void everyPanelQueryReturnsDataFromARealPrometheus() throws Exception {
        Map<String, JsonNode> ranges = new LinkedHashMap<>();
        List<String> empty = new ArrayList<>();
        for (Map.Entry<String, String> q : queries().entrySet()) {
            String expr = q.getKey().replace("$__rate_interval", RATE_INTERVAL);
            JsonNode instant = JSON.readTree(prometheusGet("/api/v1/query?query=" + encode(expr)));
            assertThat(instant.path("status").asText()).as("Prometheus accepted %s", expr).isEqualTo("success");
            if (instant.path("data").path("result").isEmpty()) {
                empty.add(q.getValue() + ": " + expr);
            }
            ranges.put(q.getKey(), JSON.readTree(prometheusGet("/api/v1/query_range?query=" + encode(expr) + "&start=" + trafficStart
                    + "&end=" + (trafficEnd + 3) + "&step=1")).path("data").path("result"));
        }
        assertThat(empty).as("panel queries without data").isEmpty();
        // What scripts/render-dashboard.py draws: each panel's title, unit and series over the run.
        List<Map<String, Object>> panels = new ArrayList<>();
        for (JsonNode panel : JSON.readTree(DASHBOARD.toFile()).path("panels")) {
            List<Object> series = new ArrayList<>();
            for (JsonNode target : panel.path("targets")) {
                series.add(Map.of("legend", target.path("legendFormat").asText(), "result", ranges.get(target.path("expr").asText())));
            }
            panels.add(Map.of("title", panel.path("title").asText(), "unit", panel.path("fieldConfig").path("defaults").path("unit")
                    .asText(), "series", series));
        }
        JSON.writerWithDefaultPrettyPrinter().writeValue(Path.of("target", "monitoring", "dashboard-data.json").toFile(), panels);
    }

    @Test
    @Order(3)
    void everyMetricTheAlertsSelectIsExported() throws IOException {
        Set<String> selected = new TreeSet<>();
        Matcher m = SELECTED.matcher(Files.readString(ALERTS));
        while (m.find()) {
            selected.add(m.group(1));
        }
        // Exported from a connection's first unexpected exception on (the exception is its label); the
        // rule that selects it is written for a series that appears.
        selected.remove("tbmq_connections_errors_total");
        assertThat(selected).as("metrics the alerts select").hasSizeGreaterThanOrEqualTo(10);
        assertThat(exported()).as("/q/metrics").containsAll(selected);
    }

    @Test
    @Order(4)
    void theAlertsEvaluateOnTheBrokersSeriesAndCatchABrokerThatIsDown() throws Exception {
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            JsonNode rules = JSON.readTree(prometheusGet("/api/v1/rules")).path("data").path("groups").get(0).path("rules");
            assertThat(rules.size()).isGreaterThanOrEqualTo(10);
            for (JsonNode rule : rules) {
                assertThat(rule.path("health").asText()).as("%s: %s", rule.path("name").asText(), rule.path("lastError").asText())
                        .isEqualTo("ok");
            }
            assertThat(alerts(deadBroker)).as("the target where nothing listens, pending for the rule's 2 minutes")
                    .containsExactly("TbmqBrokerDown pending: Broker " + deadBroker + " cannot be scraped");
        });
        // Held over several evaluations (one a second), not one quiet moment.
        String live = "127.0.0.1:" + broker.httpPort();
        Awaitility.await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> assertThat(alerts(live)).as("alerts about the healthy broker").isEmpty());
    }

    /** Active alerts (pending or firing) about {@code instance}, or about no instance, as "NAME STATE: SUMMARY". */
    private static List<String> alerts(String instance) throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode a : JSON.readTree(prometheusGet("/api/v1/alerts")).path("data").path("alerts")) {
            String about = a.path("labels").path("instance").asText();
            if (about.isEmpty() || about.equals(instance)) {
                out.add(a.path("labels").path("alertname").asText() + " " + a.path("state").asText() + ": "
                        + a.path("annotations").path("summary").asText());
            }
        }
        return out;
    }

    private static Set<String> exported() {
        Set<String> exported = new TreeSet<>();
        for (String line : broker.get("/q/metrics").split("\n")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                exported.add(line.split("[{ ]", 2)[0]);
            }
        }
        return exported;
    }

    /** Each query of the dashboard, with the title of its panel. */
    private static Map<String, String> queries() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode panel : JSON.readTree(DASHBOARD.toFile()).path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                out.put(target.path("expr").asText(), panel.path("title").asText());
            }
        }
        assertThat(out).as("queries in %s", DASHBOARD).isNotEmpty();
        return out;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String prometheusGet(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + prometheusPort + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("Prometheus %s: %s", path, r.body()).isEqualTo(200);
        return r.body();
    }
}
