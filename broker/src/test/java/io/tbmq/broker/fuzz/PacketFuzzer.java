package io.tbmq.broker.fuzz;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;
import io.tbmq.broker.codec.MqttFrameValidator;
import io.tbmq.broker.testing.Hex;
import io.tbmq.broker.testing.NettyLeakGuard;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/**
 * The fuzz target for the decoder and every packet handler: bytes from a client into the
 * production pipeline on an {@code EmbeddedChannel} of a {@link TestBroker}. Jazzer calls
 * {@link #fuzzerTestOneInput} ({@code make fuzz}); {@code PacketFuzzerTest} replays the seeds and
 * every crash found so far.
 *
 * <p>Input layout: byte 0 selects the preamble (low 2 bits: none, v3.1, v3.1.1 or v5 CONNECT
 * already accepted) and how the rest is cut into reads (bits 2-7: chunk size, 0 = one read); the
 * rest is what the client sends. A crash is any of: an exception out of the pipeline, a
 * connection closed after an unexpected exception, bytes from the broker that are not well-framed
 * server packets (or, with a preamble, do not decode), a connection without an accepted CONNECT still open after the connect timeout, or a
 * leaked buffer.
 */
public final class PacketFuzzer {
    static final String[] PREAMBLES = {
        null,
        "10 0f 00 06 4d 51 49 73 64 70 03 02 00 3c 00 01 74",
        "10 0d 00 04 4d 51 54 54 04 02 00 3c 00 01 74",
        "10 0e 00 04 4d 51 54 54 05 02 00 3c 00 00 01 74",
    };
    private static final MqttVersion[] VERSIONS = {
        MqttVersion.MQTT_3_1_1, MqttVersion.MQTT_3_1, MqttVersion.MQTT_3_1_1, MqttVersion.MQTT_5,
    };
    /** A fresh broker now and then, so sessions and retained messages of old inputs do not pile up. */
    private static final int INPUTS_PER_BROKER = 5_000;

    private static TestBroker broker;
    private static int inputs;

    static {
        NettyLeakGuard.install();
    }

    private PacketFuzzer() {
    }

    /** Called once by Jazzer: sampled leak tracking, since tracking every buffer slows fuzzing tenfold. */
    public static void fuzzerInitialize() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    }

    public static void fuzzerTestOneInput(byte[] data) {
        if (data.length == 0) {
            return;
        }
        TestBroker b = broker();
        int preamble = data[0] & 0x03;
        int chunk = (data[0] & 0xFF) >>> 2;
        byte[] wire = Arrays.copyOfRange(data, 1, data.length);
        boolean accepted = false;
        try (WireClient client = b.client(VERSIONS[preamble])) {
            if (PREAMBLES[preamble] != null) {
                client.sendHex(PREAMBLES[preamble]);
                accepted = checkAnswers(client, VERSIONS[preamble]);
                if (!accepted) {
                    throw new AssertionError("preamble CONNECT not accepted");
                }
            }
            // Without a preamble the version is whatever the input's CONNECT says: framing only.
            MqttVersion known = PREAMBLES[preamble] == null ? null : VERSIONS[preamble];
            int step = chunk == 0 ? Math.max(1, wire.length) : chunk;
            for (int from = 0; from < wire.length && client.isOpen(); from += step) {
                client.sendBytes(Arrays.copyOfRange(wire, from, Math.min(wire.length, from + step)));
                accepted |= checkAnswers(client, known);
            }
            client.advanceTime(b.config().mqtt().connectTimeout().toMillis() + 1, TimeUnit.MILLISECONDS);
            accepted |= checkAnswers(client, known);
            if (!accepted && client.isOpen()) {
                throw new AssertionError("connection without an accepted CONNECT still open after the connect timeout");
            }
        }
        checkNoInternalErrors(b);
        List<String> leaks = NettyLeakGuard.drainLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty buffer leak: " + leaks.get(0));
        }
    }

    /**
     * Everything the broker sent since the last call is a sequence of well-framed server packets,
     * and, where the session's version is known (a preamble), decodes in full. True if one of them
     * accepted a CONNECT.
     */
    private static boolean checkAnswers(WireClient client, MqttVersion known) {
        byte[] out = client.rawBytes();
        boolean accepted = ServerPacketFraming.check(out);
        if (known != null && out.length > 0) {
            EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder(16 * 1024 * 1024));
            decoder.attr(MqttFrameValidator.VERSION).set(known);
            try {
                decoder.writeInbound(Unpooled.wrappedBuffer(out));
                Object m;
                while ((m = decoder.readInbound()) != null) {
                    boolean ok = ((MqttMessage) m).decoderResult().isSuccess();
                    Throwable cause = ((MqttMessage) m).decoderResult().cause();
                    ReferenceCountUtil.release(m);
                    if (!ok) {
                        throw new AssertionError("broker sent a " + known + " packet that does not decode: " + cause);
                    }
                }
            } finally {
                decoder.finishAndReleaseAll();
            }
        }
        return accepted;
    }

    private static void checkNoInternalErrors(TestBroker b) {
        for (Counter counter : b.registry().find("tbmq.connections.errors").counters()) {
            if (counter.count() > 0) {
                String exception = counter.getId().getTag("exception");
                broker.close();
                broker = null;
                throw new AssertionError("connection closed after an unexpected " + exception + " (see the log line above)");
            }
        }
    }

    private static TestBroker broker() {
        if (broker == null || ++inputs % INPUTS_PER_BROKER == 0) {
            if (broker != null) {
                broker.close();
            }
            broker = TestBroker.anonymous();
        }
        return broker;
    }

    /** An input for {@link #fuzzerTestOneInput}: the preamble index, a chunk size (0-63) and bytes. */
    static byte[] input(int preamble, int chunk, byte[] wire) {
        byte[] data = new byte[wire.length + 1];
        data[0] = (byte) ((chunk << 2) | preamble);
        System.arraycopy(wire, 0, data, 1, wire.length);
        return data;
    }

    static int preambleOf(String session) {
        return switch (session) {
            case "v31" -> 1;
            case "v311" -> 2;
            case "v5" -> 3;
            default -> 0;
        };
    }

    static String describe(byte[] data) {
        return "preamble " + (data[0] & 3) + ", chunk " + ((data[0] & 0xFF) >>> 2) + ": "
                + Hex.of(Arrays.copyOfRange(data, 1, data.length));
    }
}
