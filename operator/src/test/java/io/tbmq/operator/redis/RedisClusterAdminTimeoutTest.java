package io.tbmq.operator.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class RedisClusterAdminTimeoutTest {

    @Test
    void aGlanceAtAPodThatAcceptsButNeverAnswersGivesUpAfterItsOwnTimeout() throws Exception {
        // As a frozen Redis, or one behind a node that went away mid-handshake: the socket is open, nothing comes back.
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0)) {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(silent.accept());
                    }
                } catch (Exception closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            long start = System.nanoTime();
            try (RedisClusterAdmin admin = new RedisClusterAdmin((String) null, Duration.ofMillis(500))) {
                assertThatThrownBy(() -> admin.observe(new RedisNode(0, "127.0.0.1", silent.getLocalPort())))
                        .isInstanceOf(RuntimeException.class);
            }
            long tookMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertThat(tookMillis).as("bounded by the glance timeout, not Lettuce's 10 s").isLessThan(8_000);
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
    }
}
