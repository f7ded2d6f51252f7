package io.tbmq.loadgen;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Command line of the load generator.
 *
 * <pre>
 * --host 127.0.0.1 --port 1883 --user U --password P
 * --ports 1883,1884,1885  a cluster: publisher n connects to port n mod k, its subscriber to the
 *                         next one, so every pair crosses nodes
 * --scenario p2p|fanout   p2p: N publisher/subscriber pairs (the TBMQ paper's test);
 *                         fanout: 1 publisher, N subscribers of its topic
 * --pairs 1000            p2p pairs (or fan-out subscribers)
 * --rate 5                messages per second per publisher
 * --qos 1 --payload 62 --version 4|5
 * --persistent true       subscribers with clean session = false (v3) / Session Expiry (v5)
 * --warmup 5 --duration 30 --drain 10   seconds
 * --json FILE             write the result as JSON
 * </pre>
 */
record Options(String host, int port, java.util.List<Integer> ports, String user, String password, String scenario, int pairs, double rate, int qos,
        int payload, int version, boolean persistent, int warmup, int duration, int drain, String json, String runId) {

    static Options parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option, got " + args[i]);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        int port = Integer.parseInt(m.getOrDefault("port", "1883"));
        java.util.List<Integer> ports = m.containsKey("ports")
                ? java.util.Arrays.stream(m.get("ports").split(",")).map(String::trim).map(Integer::valueOf).toList()
                : java.util.List.of(port);
        Options o = new Options(m.getOrDefault("host", "127.0.0.1"), port, ports,
                m.get("user"), m.get("password"), m.getOrDefault("scenario", "p2p"),
                Integer.parseInt(m.getOrDefault("pairs", "1000")), Double.parseDouble(m.getOrDefault("rate", "1")),
                Integer.parseInt(m.getOrDefault("qos", "1")), Integer.parseInt(m.getOrDefault("payload", "62")),
                Integer.parseInt(m.getOrDefault("version", "4")), Boolean.parseBoolean(m.getOrDefault("persistent", "true")),
                Integer.parseInt(m.getOrDefault("warmup", "5")), Integer.parseInt(m.getOrDefault("duration", "30")),
                Integer.parseInt(m.getOrDefault("drain", "10")), m.get("json"),
                m.getOrDefault("run-id", Long.toString(System.currentTimeMillis() % 100_000, 36)));
        if (o.payload() < Payload.HEADER) {
            throw new IllegalArgumentException("--payload must be at least " + Payload.HEADER + " bytes");
        }
        if (!o.scenario().equals("p2p") && !o.scenario().equals("fanout")) {
            throw new IllegalArgumentException("--scenario is p2p or fanout");
        }
        return o;
    }

    /** The node publisher {@code n} connects to. */
    int publisherPort(int n) {
        return ports.get(n % ports.size());
    }

    /** The node subscriber {@code n} connects to: the next one after its publisher's. */
    int subscriberPort(int n) {
        return ports.get((n + 1) % ports.size());
    }

    boolean fanout() {
        return scenario.equals("fanout");
    }

    int publishers() {
        return fanout() ? 1 : pairs;
    }

    /** europe/ua/kyiv/n/x as in the TBMQ paper's tests; fan-out uses one topic. */
    String publishTopic(int n) {
        return fanout() ? "bench/" + runId + "/fanout" : "europe/ua/kyiv/" + runId + "-" + n + "/x";
    }

    String subscribeFilter(int n) {
        return fanout() ? "bench/" + runId + "/fanout" : "europe/ua/kyiv/" + runId + "-" + n + "/+";
    }
}
