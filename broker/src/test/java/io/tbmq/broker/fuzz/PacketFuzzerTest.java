package io.tbmq.broker.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.tbmq.broker.testing.Hex;

/**
 * The fuzz target's regression tier: every packet-table seed, whole and cut into 1- and 7-byte
 * reads, and every input a fuzzing run found crashing (src/test/resources/fuzz/packet-crashes/,
 * where {@code make fuzz} tells you to copy them) must pass the target's checks.
 */
class PacketFuzzerTest {
    private static final Path CRASHES = Path.of("src/test/resources/fuzz/packet-crashes");

    static Stream<Arguments> seeds() throws IOException {
        List<Arguments> out = new ArrayList<>();
        List<byte[]> seeds = FuzzSeeds.fromPacketTable();
        for (int i = 0; i < seeds.size(); i++) {
            byte[] seed = seeds.get(i);
            for (int chunk : new int[] {0, 1, 7}) {
                byte[] input = seed.clone();
                input[0] = (byte) ((chunk << 2) | (seed[0] & 3));
                out.add(Arguments.of("seed " + i + " chunk " + chunk, input));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("seeds")
    void packetTableSeedsPassTheTargetsChecks(String name, byte[] input) {
        assertThatCode(() -> PacketFuzzer.fuzzerTestOneInput(input)).as(PacketFuzzer.describe(input)).doesNotThrowAnyException();
    }

    @Test
    void inputsThatOnceCrashedNoLongerDo() throws IOException {
        try (Stream<Path> files = Files.list(CRASHES)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("crash-")).sorted().toList()) {
                byte[] input = Files.readAllBytes(f);
                assertThatCode(() -> PacketFuzzer.fuzzerTestOneInput(input))
                        .as(f.getFileName() + " " + PacketFuzzer.describe(input)).doesNotThrowAnyException();
            }
        }
    }

    @Test
    void seedsCoverEveryPreamble() throws IOException {
        assertThat(FuzzSeeds.fromPacketTable()).hasSizeGreaterThanOrEqualTo(300)
                .extracting(s -> s[0] & 3).contains(0, 1, 2, 3);
    }
}
