package io.tbmq.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the brokers' logs say of partitions added to tbmq.msg.all: when each broker moved, how long
 * its moving topics waited, whether their order was kept, and how far apart the brokers moved
 * (a client reconnecting to another broker keeps its order only if they moved together), and which
 * brokers joined a move under way as they started.
 */
final class PartitionMoves {
    private static final Pattern GREW = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .*tbmq\\.msg\\.all grew from (\\d+) to (\\d+) partitions"
            + "(?: \\(joining the move of ([^,]+), under way as this node started\\))?: topics");
    private static final Pattern DONE = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .*tbmq\\.msg\\.all: every topic is on its partition of (\\d+) now");
    private static final Pattern LET_GO = Pattern.compile("^\\S+ WARN .*tbmq\\.msg\\.all grew from \\d+ to (\\d+) partitions: (\\d+) messages of topics that moved waited \\(([^)]*)\\)");

    /** One broker's move to {@code to} partitions; {@code joined}: the node whose move it joined as it started, or null. */
    record Move(String broker, int from, int to, LocalTime began, String joined, LocalTime ended, String letGo) {
        String describe() {
            String took = ended == null ? "not finished when the log ended"
                    : "every topic on its new partition " + seconds(Duration.between(began, ended)) + " later";
            return from + " -> " + to + " at " + began + (joined == null ? "" : ", joined " + joined + "'s move as it started") + ", "
                    + took + (letGo == null ? ", in order" : ", bounded: " + letGo);
        }
    }

    private PartitionMoves() {
    }

    /** The moves in one broker's log, in the order they began. */
    static List<Move> parse(String broker, List<String> lines) {
        List<Move> moves = new ArrayList<>();
        Move open = null;
        String letGo = null;
        for (String line : lines) {
            Matcher grew = GREW.matcher(line);
            Matcher done = DONE.matcher(line);
            Matcher let = LET_GO.matcher(line);
            if (grew.find()) {
                if (open != null) {
                    moves.add(open);
                }
                open = new Move(broker, Integer.parseInt(grew.group(2)), Integer.parseInt(grew.group(3)), LocalTime.parse(grew.group(1)),
                        grew.group(4), null, null);
                letGo = null;
            } else if (let.find() && open != null) {
                letGo = let.group(2) + " messages went on at " + let.group(3);
            } else if (done.find() && open != null && Integer.parseInt(done.group(2)) == open.to()) {
                moves.add(new Move(broker, open.from(), open.to(), open.began(), open.joined(), LocalTime.parse(done.group(1)), letGo));
                open = null;
            }
        }
        if (open != null) {
            moves.add(open);
        }
        return moves;
    }

    /** Report lines for the broker logs in {@code dir} (files named {@code <pod>-<uid>.log}). */
    static Map<String, String> report(Path dir, String brokerPrefix) throws IOException {
        List<Move> moves = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.getFileName().toString().startsWith(brokerPrefix)).sorted().toList()) {
                    String name = f.getFileName().toString().replaceFirst("\\.log$", "");
                    moves.addAll(parse(name, Files.readAllLines(f)));
                }
            }
        }
        Map<String, String> lines = new LinkedHashMap<>();
        for (Move m : moves) {
            lines.put("tbmq.msg.all move, " + m.broker() + " (" + m.from() + " -> " + m.to() + ")", m.describe());
        }
        Map<Integer, List<Move>> byCount = new LinkedHashMap<>();
        // A broker that joined a move began it when it started, not when it noticed the growth.
        moves.stream().filter(m -> m.joined() == null).forEach(m -> byCount.computeIfAbsent(m.to(), x -> new ArrayList<>()).add(m));
        byCount.forEach((to, same) -> {
            if (same.size() > 1) {
                LocalTime first = same.stream().map(Move::began).min(LocalTime::compareTo).orElseThrow();
                LocalTime last = same.stream().map(Move::began).max(LocalTime::compareTo).orElseThrow();
                lines.put("tbmq.msg.all move to " + to + " partitions, brokers apart", seconds(Duration.between(first, last)) + " ("
                        + same.size() + " brokers)");
            }
        });
        if (moves.isEmpty()) {
            lines.put("tbmq.msg.all moves", "none in the brokers' logs");
        }
        return lines;
    }

    private static String seconds(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }
}
