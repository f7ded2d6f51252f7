package io.tbmq.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the brokers' logs say of connections the connect timeout ended, step by step: CONNECTs still
 * unanswered (and what they waited for) and connections that never sent a CONNECT. A pair silent
 * for the connect timeout after a broker restart (run 59 of docs/reliability.md) is named here.
 * The broker logs one such line a second and counts the lines it held back on the next one, so a
 * burst is counted in full only once a later line is let through. Times are the logs' UTC clock
 * times: a run across midnight would put the lines after it in the wrong step.
 */
final class ConnectTimeouts {
    private static final Pattern SUPPRESSED = Pattern.compile("\\((\\d+) similar lines suppressed\\)\\s*$");
    private static final Pattern NOT_ANSWERED = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .*CONNECT of .* not answered within \\S+, "
            + "still waiting for (.+?): refused as server unavailable");
    private static final Pattern NO_CONNECT = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .*no CONNECT within \\S+ from .*: closed");

    /** One log line: when, what the connection waited for ("CONNECT" for none sent), and how many connections it stands for. */
    record Timeout(LocalTime at, String waitingFor, int count) {
    }

    private ConnectTimeouts() {
    }

    static List<Timeout> parse(List<String> lines) {
        List<Timeout> found = new ArrayList<>();
        for (String line : lines) {
            Matcher refused = NOT_ANSWERED.matcher(line);
            Matcher closed = NO_CONNECT.matcher(line);
            Matcher held = SUPPRESSED.matcher(line);
            int count = 1 + (held.find() ? Integer.parseInt(held.group(1)) : 0);
            if (refused.find()) {
                found.add(new Timeout(LocalTime.parse(refused.group(1)), refused.group(2), count));
            } else if (closed.find()) {
                found.add(new Timeout(LocalTime.parse(closed.group(1)), "CONNECT", count));
            }
        }
        return found;
    }

    /**
     * Report lines for the broker logs in {@code dir} (files named {@code <pod>-<uid>.log}), each line put in
     * the last step of {@code steps} (name to start, UTC, in order) that began at or before it.
     */
    static Map<String, String> report(Path dir, String brokerPrefix, Map<String, LocalTime> steps) throws IOException {
        List<Timeout> all = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.getFileName().toString().startsWith(brokerPrefix)).sorted().toList()) {
                    all.addAll(parse(Files.readAllLines(f)));
                }
            }
        }
        Map<String, Map<String, Integer>> byStep = new LinkedHashMap<>();
        for (Timeout t : all) {
            String step = "before the first step";
            for (Map.Entry<String, LocalTime> s : steps.entrySet()) {
                if (!s.getValue().isAfter(t.at())) {
                    step = s.getKey();
                }
            }
            byStep.computeIfAbsent(step, x -> new TreeMap<>()).merge(t.waitingFor(), t.count(), Integer::sum);
        }
        Map<String, String> lines = new LinkedHashMap<>();
        if (byStep.isEmpty()) {
            lines.put("connections ended by the connect timeout", "none in the brokers' logs");
        }
        List<String> order = new ArrayList<>(List.of("before the first step"));
        order.addAll(steps.keySet());
        order.stream().filter(byStep::containsKey).forEach(step -> lines.put("connections ended by the connect timeout, " + step,
                byStep.get(step).values().stream().mapToInt(Integer::intValue).sum() + " (waiting for " + byStep.get(step).entrySet()
                        .stream().map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining(", ")) + ")"));
        return lines;
    }
}
