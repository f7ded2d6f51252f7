package io.tbmq.broker.kafka;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.utils.Utils;
import org.jboss.logging.Logger;

/**
 * Asks each bootstrap address for its API versions once, before the Kafka clients connect.
 *
 * <p>Kafka's clients allocate whatever response size the first four bytes of a reply announce, with no limit: a
 * TLS listener reached without {@code security.protocol=SSL} (a TLS alert reads as 352 MB) or an HTTP server or proxy
 * ("HTTP" reads as 1.2 GB) ends the JVM with an OutOfMemoryError that names neither. This check turns that into an
 * error naming the address and what answered. An address that refuses or stays silent passes: Kafka may still be
 * starting, and the clients wait for it.
 */
public final class KafkaListenerCheck {
    private static final Logger LOG = Logger.getLogger(KafkaListenerCheck.class);
    private static final short API_VERSIONS = 18;
    private static final int CORRELATION_ID = 0x7b6d71;
    /** Far above any ApiVersions response, far below a size that could hurt. */
    private static final int MAX_RESPONSE = 1 << 20;

    private final Duration timeout;

    public KafkaListenerCheck(Duration timeout) {
        this.timeout = timeout;
    }

    /**
     * Throws when an address of {@code bootstrapServers} answers, but not as a Kafka listener of
     * {@code securityProtocol}. Only the plaintext protocols are checked: a TLS client fails its handshake instead.
     */
    public void verify(String bootstrapServers, String securityProtocol) {
        if (!securityProtocol.equalsIgnoreCase("PLAINTEXT") && !securityProtocol.equalsIgnoreCase("SASL_PLAINTEXT")) {
            return;
        }
        for (String address : addresses(bootstrapServers)) {
            Optional<String> problem = problem(address);
            if (problem.isPresent()) {
                throw new IllegalStateException("Kafka bootstrap address " + address + " (security.protocol "
                        + securityProtocol + ") " + problem.get());
            }
        }
    }

    /** What is wrong with the listener at {@code host:port}, or nothing when it answered as Kafka or not at all. */
    public Optional<String> problem(String address) {
        return answer(address).problem();
    }

    /** How the listener at {@code host:port} (any form the Kafka clients accept) answered an ApiVersions request. */
    public Answer answer(String address) {
        String host = Utils.getHost(address);
        Integer port = Utils.getPort(address);
        if (host == null || port == null) {
            return Answer.NONE; // the clients report a malformed address themselves
        }
        InetAddress[] resolved;
        try {
            resolved = InetAddress.getAllByName(host);
        } catch (IOException e) {
            return Answer.NONE;
        }
        Answer kafka = Answer.NONE;
        // the clients try every address a name resolves to (client.dns.lookup=use_all_dns_ips): so does the check
        for (InetAddress ip : resolved) {
            Answer answer = answer(new InetSocketAddress(ip, port));
            if (answer.problem().isPresent()) {
                return answer;
            }
            if (answer.kafka()) {
                kafka = answer;
            }
        }
        return kafka;
    }

    private Answer answer(InetSocketAddress address) {
        try (Socket socket = new Socket()) {
            socket.connect(address, (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            new DataOutputStream(socket.getOutputStream()).write(apiVersionsRequest());
            return classify(readUpTo(socket.getInputStream(), 16));
        } catch (IOException e) {
            LOG.debugf("Kafka listener check of %s: %s", address, e);
            return Answer.NONE;
        }
    }

    /** A listener's answer: {@code kafka} when it replied as Kafka, a {@code problem} when it replied as something else. */
    public record Answer(boolean kafka, Optional<String> problem) {
        static final Answer NONE = new Answer(false, Optional.empty());
        static final Answer KAFKA = new Answer(true, Optional.empty());

        static Answer other(String problem) {
            return new Answer(false, Optional.of(problem));
        }
    }

    static Answer classify(byte[] head) {
        if (head.length < 4) {
            return Answer.NONE; // closed or silent: no size a client could misread
        }
        int size = readInt(head, 0);
        if (size >= 4 && size <= MAX_RESPONSE) {
            if (head.length < 8) {
                return Answer.NONE;
            }
            if (readInt(head, 4) == CORRELATION_ID) {
                return Answer.KAFKA;
            }
        }
        String seen = "answered " + printable(head);
        if ((head[0] == 0x15 || head[0] == 0x16) && head[1] == 0x03) {
            return Answer.other(seen + ": a TLS listener. Set tbmq.kafka.properties.\"security.protocol\" to SSL (or SASL_SSL)"
                    + " with its truststore, or use the plaintext listener's port");
        }
        if (head.length >= 5 && new String(head, 0, 5, StandardCharsets.US_ASCII).equals("HTTP/")) {
            return Answer.other(seen + ": an HTTP server, or a proxy on the way, not a Kafka listener");
        }
        return Answer.other(seen + ": not a Kafka listener");
    }

    private static List<String> addresses(String bootstrapServers) {
        List<String> out = new ArrayList<>();
        for (String a : bootstrapServers.split(",")) {
            if (!a.isBlank()) {
                out.add(a.trim());
            }
        }
        return out;
    }

    /** ApiVersions v0 (header v1: key, version, correlation id, client id; empty body), which every Kafka answers. */
    private static byte[] apiVersionsRequest() throws IOException {
        byte[] clientId = "tbmq-listener-check".getBytes(StandardCharsets.US_ASCII);
        var bytes = new java.io.ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(2 + 2 + 4 + 2 + clientId.length);
        out.writeShort(API_VERSIONS);
        out.writeShort(0);
        out.writeInt(CORRELATION_ID);
        out.writeShort(clientId.length);
        out.write(clientId);
        return bytes.toByteArray();
    }

    private static byte[] readUpTo(InputStream in, int max) throws IOException {
        byte[] buf = new byte[max];
        int n = 0;
        try {
            while (n < 8) {
                int r = in.read(buf, n, max - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
        } catch (IOException e) {
            // a timeout, or a reset after a TLS alert (the peer closed with our request unread): judge what arrived
        }
        return java.util.Arrays.copyOf(buf, n);
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    /** The bytes as text where they are printable ASCII, as \xNN where not: "HTTP/1.1 400 Bad" or "\x15\x03\x03...". */
    static String printable(byte[] head) {
        StringBuilder s = new StringBuilder("\"");
        for (byte b : head) {
            if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
                s.append((char) b);
            } else {
                s.append(String.format("\\x%02x", b & 0xff));
            }
        }
        return s.append('"').toString();
    }
}
