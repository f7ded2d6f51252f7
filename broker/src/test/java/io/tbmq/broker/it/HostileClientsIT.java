package io.tbmq.broker.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;

import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.Hex;
import io.tbmq.localstack.BrokerNode;

/**
 * Hostile clients against a real broker process: connections that never finish CONNECT (silent or
 * trickling it byte by byte) and a subscriber that never acknowledges. Each must cost the broker
 * bounded time and memory and no one else's service.
 */
class HostileClientsIT {
    private static final byte[] CONNECT_V311 = Hex.bytes("10 0d 00 04 4d 51 54 54 04 02 00 3c 00 01 74");
    private final ItStack it = ItStack.get();
    private final BrokerNode broker = it.broker();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    /** Seconds until the broker closes {@code socket}, sending {@code trickle} one byte every 1.5 s meanwhile. */
    private CompletableFuture<Double> secondsUntilClosed(byte[] trickle) throws java.io.IOException {
        long start = System.nanoTime();
        Socket socket = new Socket("127.0.0.1", broker.mqttPort());
        return CompletableFuture.supplyAsync(() -> {
            try (socket) {
                socket.setSoTimeout(1500);
                OutputStream out = socket.getOutputStream();
                InputStream in = socket.getInputStream();
                int sent = 0;
                while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30)) {
                    try {
                        int b = in.read();
                        if (b < 0) {
                            return (System.nanoTime() - start) / 1e9;
                        }
                        throw new AssertionError("the broker answered an unfinished CONNECT with byte " + b);
                    } catch (SocketTimeoutException e) {
                        if (sent < trickle.length) {
                            out.write(trickle[sent++]);
                            out.flush();
                        }
                    }
                }
                return Double.POSITIVE_INFINITY;
            } catch (java.io.IOException e) {
                return (System.nanoTime() - start) / 1e9; // reset by the broker: closed as well
            }
        }, threads);
    }

    @Test
    void silentAndTricklingConnectionsAreClosedAtTheConnectTimeout() throws Exception {
        // The 15-byte CONNECT at one byte per 1.5 s would take 22 s: the 10 s deadline is absolute.
        CompletableFuture<Double> silent = secondsUntilClosed(new byte[0]);
        CompletableFuture<Double> trickling = secondsUntilClosed(CONNECT_V311);
        assertThat(silent.get(40, TimeUnit.SECONDS)).as("silent connection closed after (s)").isBetween(9.0, 13.0);
        assertThat(trickling.get(40, TimeUnit.SECONDS)).as("trickling connection closed after (s)").isBetween(9.0, 13.0);
        // Meanwhile and afterwards the broker serves everyone else.
        Mqtt5BlockingClient ok = Clients.alice5(broker, "after-slowloris");
        ok.disconnect();
    }

    @Test
    void aSubscriberThatNeverAcknowledgesIsBoundedAndDoesNotSlowOthers() throws Exception {
        int messages = 3000;
        double droppedBefore = queueFullDrops();
        try (RawClient stalled = new RawClient(broker.mqttPort(), MqttVersion.MQTT_5)) {
            stalled.connect("never-acks", "alice", true, 0);
            stalled.subscribe("stall/t", 1);
            Mqtt5BlockingClient healthy = Clients.alice5(broker, "healthy-sub");
            AtomicInteger received = new AtomicInteger();
            Mqtt5Client async = Mqtt5Client.builder().identifier("healthy-sub-async").serverHost("127.0.0.1")
                    .serverPort(broker.mqttPort()).simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes()).applySimpleAuth()
                    .build();
            async.toAsync().connect().get(10, TimeUnit.SECONDS);
            async.toAsync().subscribeWith().topicFilter("stall/t").qos(MqttQos.AT_LEAST_ONCE)
                    .callback(p -> received.incrementAndGet()).send().get(10, TimeUnit.SECONDS);
            Mqtt5BlockingClient pub = Clients.alice5(broker, "stall-pub");
            for (int i = 0; i < messages; i++) {
                pub.publishWith().topic("stall/t").qos(MqttQos.AT_LEAST_ONCE).payload(("m" + i).getBytes()).send();
            }
            Awaitility.await().atMost(30, TimeUnit.SECONDS).until(() -> received.get() == messages);

            int unacked = 0;
            while (stalled.nextPublish(500) != null) {
                unacked++;
            }
            assertThat(unacked).as("unacknowledged messages in flight to the stalled client").isEqualTo(128);
            // 128 in flight, 1000 queued (tbmq.mqtt.max-queued-messages), the rest dropped and counted.
            Awaitility.await().atMost(10, TimeUnit.SECONDS)
                    .until(() -> queueFullDrops() - droppedBefore >= messages - 128 - 1000);
            assertThat(queueFullDrops() - droppedBefore).isEqualTo(messages - 128 - 1000);
            assertThat(Files.readString(broker.log())).contains("message for never-acks dropped: its queue holds");
            async.toBlocking().disconnect();
            pub.disconnect();
            healthy.disconnect();
        }
    }

    private double queueFullDrops() {
        Matcher m = Pattern.compile("(?m)^tbmq_messages_dropped_total\\{[^}]*reason=\"queue-full\"[^}]*} ([0-9.eE+]+)")
                .matcher(broker.get("/q/metrics"));
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }
}
