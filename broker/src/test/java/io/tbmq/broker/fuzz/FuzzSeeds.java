package io.tbmq.broker.fuzz;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.tbmq.broker.testing.Hex;

/**
 * The fuzzers' seed corpus: every case of the byte-level packet table (setup packets and input,
 * after the case's preamble) as one {@link PacketFuzzer} input. {@code scripts/fuzz.sh} writes
 * them with {@link #main}.
 */
public final class FuzzSeeds {
    private FuzzSeeds() {
    }

    public static List<byte[]> fromPacketTable() throws IOException {
        JsonNode cases;
        try (InputStream in = FuzzSeeds.class.getResourceAsStream("/packet-table.json")) {
            cases = new ObjectMapper().readTree(in).get("cases");
        }
        List<byte[]> seeds = new ArrayList<>();
        for (JsonNode c : cases) {
            StringBuilder hex = new StringBuilder();
            if (c.has("setup")) {
                c.get("setup").forEach(p -> hex.append(p.asText()).append(' '));
            }
            hex.append(c.get("in").asText());
            seeds.add(PacketFuzzer.input(PacketFuzzer.preambleOf(c.get("session").asText()), 0, Hex.bytes(hex.toString())));
        }
        return seeds;
    }

    /** Writes the seeds as files seed-000 ... into the directory given. */
    public static void main(String[] args) throws IOException {
        Path dir = Files.createDirectories(Path.of(args[0]));
        List<byte[]> seeds = fromPacketTable();
        for (int i = 0; i < seeds.size(); i++) {
            Files.write(dir.resolve(String.format("seed-%03d", i)), seeds.get(i));
        }
        System.out.println(seeds.size() + " seeds from the packet table in " + dir);
    }
}
