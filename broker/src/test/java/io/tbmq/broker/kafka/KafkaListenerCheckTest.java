package io.tbmq.broker.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a broker does when its Kafka bootstrap address answers as something else: peers on a loopback socket
 * play a TLS listener, an HTTP proxy, a silent or closing peer and a Kafka reply of the right shape.
 */
class KafkaListenerCheckTest {
    private final KafkaListenerCheck check = new KafkaListenerCheck(Duration.ofSeconds(5));
    private boolean reset;
    private ServerSocket server;
    private final AtomicReference<byte[]> request = new AtomicReference<>();

    @AfterEach
    void close() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void anHttpAnswerIsNamedInsteadOfAllocatingItsFirstFourBytes() throws IOException {
        String address = peer(req -> "HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

        assertThat(check.problem(address)).hasValueSatisfying(p -> assertThat(p)
                .startsWith("answered \"HTTP/1.1 400 Bad\"")
                .contains("an HTTP server, or a proxy on the way"));
    }

    @Test
    void aTlsAlertTellsWhichSettingIsMissing() throws IOException {
        String address = peer(req -> HexFormat.of().parseHex("15030300020232")); // fatal alert, decode_error; then closed

        assertThatThrownBy(() -> check.verify(address, "PLAINTEXT"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Kafka bootstrap address " + address)
                .hasMessageContaining("\\x15\\x03\\x03\\x00\\x02\\x02")
                .hasMessageContaining("a TLS listener. Set tbmq.kafka.properties.\"security.protocol\" to SSL");
    }

    @Test
    void aTlsAlertFollowedByAResetIsStillRead() throws IOException {
        reset = true; // as OpenSSL-based listeners do: alert, then close with the rest of the request unread
        String address = peer(req -> HexFormat.of().parseHex("15030300020228"));

        assertThat(check.problem(address)).hasValueSatisfying(p -> assertThat(p).contains("a TLS listener"));
    }

    @Test
    void anyOtherAnswerIsNotAKafkaListener() throws IOException {
        String address = peer(req -> "-ERR unknown command\r\n".getBytes(StandardCharsets.US_ASCII));

        assertThat(check.problem(address)).hasValueSatisfying(p -> assertThat(p)
                .startsWith("answered \"-ERR unknown").endsWith(": not a Kafka listener"));
    }

    @Test
    void aKafkaReplyToTheApiVersionsRequestPasses() throws IOException {
        String address = peer(req -> {
            // size 6: the correlation id the request carried, then error code 35 (UNSUPPORTED_VERSION) as 4.x may answer v0
            byte[] reply = new byte[10];
            reply[3] = 6;
            System.arraycopy(req, 4, reply, 4, 4);
            reply[9] = 35;
            return reply;
        });

        assertThat(check.answer(address).kafka()).isTrue();
        assertThat(check.answer("PLAINTEXT://" + address).kafka()).as("with a scheme, as the clients accept it").isTrue();
        check.verify(" " + address + ",", "PLAINTEXT");
        byte[] sent = request.get();
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(sent));
        assertThat(in.readShort()).as("ApiVersions key").isEqualTo((short) 18);
        assertThat(in.readShort()).as("version 0, which every Kafka answers").isEqualTo((short) 0);
        assertThat(new String(sent, 10, sent.length - 10, StandardCharsets.US_ASCII)).isEqualTo("tbmq-listener-check");
    }

    @Test
    void aReplyOfAnotherRequestIsNotTakenForKafka() throws IOException {
        String address = peer(req -> new byte[] {0, 0, 0, 6, 0, 0, 0, 1, 0, 0});

        assertThat(check.problem(address)).hasValueSatisfying(p -> assertThat(p).endsWith(": not a Kafka listener"));
    }

    @Test
    void aListenerThatRefusesStaysSilentOrClosesIsLeftToTheClients() throws IOException {
        int refused;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            refused = s.getLocalPort();
        }
        assertThat(check.answer("127.0.0.1:" + refused)).as("refused: Kafka may be starting").isEqualTo(KafkaListenerCheck.Answer.NONE);

        String silent = peer(req -> {
            sleep(1500);
            return new byte[0];
        });
        assertThat(new KafkaListenerCheck(Duration.ofMillis(300)).answer(silent)).as("silent past the timeout")
                .isEqualTo(KafkaListenerCheck.Answer.NONE);
        close();

        String closing = peer(req -> new byte[0]);
        assertThat(check.answer(closing)).as("closed without a byte").isEqualTo(KafkaListenerCheck.Answer.NONE);
    }

    @Test
    void tlsClientsAreNotChecked() throws IOException {
        String address = peer(req -> "HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

        check.verify(address, "SSL");
        check.verify(address, "SASL_SSL");
        assertThat(request.get()).as("no connection made").isNull();
        assertThatThrownBy(() -> check.verify(address, "SASL_PLAINTEXT")).hasMessageContaining("HTTP server");
    }

    /** A one-connection-at-a-time peer that reads a Kafka-framed request and writes what {@code answer} makes of it. */
    private String peer(Function<byte[], byte[]> answer) throws IOException {
        server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
        ServerSocket listening = server;
        Thread t = new Thread(() -> {
            while (!listening.isClosed()) {
                try (Socket s = listening.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    byte[] body = new byte[in.readInt()];
                    in.readFully(body);
                    request.set(body);
                    s.getOutputStream().write(answer.apply(body));
                    s.getOutputStream().flush();
                    if (reset) {
                        s.setSoLinger(true, 0);
                    }
                } catch (IOException e) {
                    // closed by the test
                }
            }
        }, "kafka-listener-peer");
        t.setDaemon(true);
        t.start();
        return "127.0.0.1:" + server.getLocalPort();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
