package io.tbmq.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConnectTimeoutsTest {
    private static final String REFUSED = " INFO  [io.tb.br.pr.ConnectHandler] (vert.x-eventloop-thread-1) CONNECT of q1-7-sub from "
            + "/10.244.0.1:51234 not answered within PT10S, still waiting for the session store: refused as server unavailable";
    private static final String CLOSED = " INFO  [io.tb.br.pr.PacketDispatcher] (vert.x-eventloop-thread-0) no CONNECT within PT10S from "
            + "/10.244.0.1:40000: closed";

    @Test
    void countsEachStepsTimeoutsByWhatTheyWaitedForWithTheLinesTheBrokerHeldBack(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("tbmq-broker-0-1a2b3c4d.log"), List.of("09:59:59.000" + CLOSED,
                "10:00:05.000" + REFUSED, "10:00:06.000" + REFUSED + " (4 similar lines suppressed)",
                "10:00:07.000" + REFUSED.replace("the session store", "authentication")));
        Files.write(dir.resolve("tbmq-broker-1-5e6f7a8b.log"), List.of("10:01:00.000" + CLOSED + " (2 similar lines suppressed)",
                "10:01:01.000 INFO  [io.tb.br.pr.ConnectHandler] (x) something else"));
        Files.write(dir.resolve("tbmq-redis-0-00000000.log"), List.of("10:00:05.000" + REFUSED));
        Map<String, LocalTime> steps = new LinkedHashMap<>();
        steps.put("steady traffic", LocalTime.parse("10:00:00"));
        steps.put("one broker pod deleted", LocalTime.parse("10:00:30"));

        assertThat(ConnectTimeouts.report(dir, "tbmq-broker-", steps)).containsExactly(
                entry("connections ended by the connect timeout, before the first step", "1 (waiting for CONNECT: 1)"),
                entry("connections ended by the connect timeout, steady traffic", "7 (waiting for authentication: 1, the session store: 6)"),
                entry("connections ended by the connect timeout, one broker pod deleted", "3 (waiting for CONNECT: 3)"));
    }

    @Test
    void saysSoWhenNoConnectionTimedOut(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("tbmq-broker-0-1a2b3c4d.log"), List.of("10:00:00.000 INFO  [io.tb.br.ka.TopicProvisioner] (x) started"));
        assertThat(ConnectTimeouts.report(dir, "tbmq-broker-", Map.of("steady traffic", LocalTime.parse("09:00:00"))))
                .containsExactly(entry("connections ended by the connect timeout", "none in the brokers' logs"));
    }
}
