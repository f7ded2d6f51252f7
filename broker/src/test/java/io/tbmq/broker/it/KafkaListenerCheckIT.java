package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.kafka.KafkaListenerCheck;

/**
 * The broker's check of its Kafka bootstrap address against a real Kafka, and a broker started against a peer
 * that answers every connection with "HTTP/1.1 400 Bad Request" (as a transparent egress proxy does): it stops with
 * that reason instead of dying of an OutOfMemoryError in a Kafka client thread.
 */
class KafkaListenerCheckIT {
    private final ItStack it = ItStack.get();

    @Test
    void aRealKafkaListenerPasses() {
        String bootstrap = it.stack().kafka().bootstrapServers();

        assertThat(new KafkaListenerCheck(Duration.ofSeconds(3)).answer(bootstrap).kafka())
                .as("Kafka %s answered the ApiVersions request with its correlation id", bootstrap).isTrue();
    }

    @Test
    void aBrokerPointedAtAnHttpProxyStopsNamingWhatAnswered() throws Exception {
        try (ServerSocket proxy = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> answerBadRequest(proxy), "http-400-peer");
            t.setDaemon(true);
            t.start();
            String address = "127.0.0.1:" + proxy.getLocalPort();

            Throwable failure = catchThrowable(
                    () -> it.startBroker("listener-check", Map.of("tbmq.kafka.bootstrap-servers", address)));

            assertThat(failure).isInstanceOf(IllegalStateException.class).hasMessageContaining("exited during start");
            String message = failure.getMessage();
            Path log = Path.of(message.substring(message.indexOf(", see ") + ", see ".length()));
            String text = Files.readString(log);
            assertThat(text).contains("Kafka bootstrap address " + address + " (security.protocol PLAINTEXT) answered \"HTTP/1.1 400 Bad\"")
                    .contains("an HTTP server, or a proxy on the way, not a Kafka listener")
                    .doesNotContain("OutOfMemoryError");
        }
    }

    private static void answerBadRequest(ServerSocket proxy) {
        while (!proxy.isClosed()) {
            try (Socket s = proxy.accept()) {
                s.setSoTimeout(2000);
                InputStream in = s.getInputStream();
                in.read(new byte[512]);
                s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
            } catch (IOException e) {
                // closed by the test, or a client gone
            }
        }
    }
}
