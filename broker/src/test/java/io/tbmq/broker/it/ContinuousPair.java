package io.tbmq.broker.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttVersion;

/**
 * A publisher and a persistent subscriber that keep going through failures, reconnecting as real
 * devices would. Afterwards: which sequence numbers the broker acknowledged (PUBACK), which
 * arrived, duplicates (and whether DUP was set), order, and the longest gap between deliveries.
 */
final class ContinuousPair {
    /** How the subscriber's session is kept. */
    enum SubscriberKind {
        /** Persistent, stored in Redis (the default). */
        DEVICE("alice", false),
        /** Clean session, kept in the memory of its node only; it subscribes again on each connection. */
        MEMORY("alice", true),
        /** Persistent, in its own Kafka topic (the credentials' APPLICATION user). */
        APPLICATION("app", false);

        final String user;
        final boolean clean;

        SubscriberKind(String user, boolean clean) {
            this.user = user;
            this.clean = clean;
        }
    }

    private SubscriberKind kind = SubscriberKind.DEVICE;
    private final List<Integer> publisherPorts;
    private final List<Integer> subscriberPorts;
    private volatile int publisherNode;
    private volatile int subscriberNode;
    private final String name;
    private final int ratePerSecond;
    private final int qos;
    private final BitSet acked = new BitSet();
    private final BitSet received = new BitSet();
    /** When each sequence number was acknowledged (epoch millis), to find a lost one in the brokers' logs. */
    private final java.util.Map<Integer, Long> ackedAt = new java.util.HashMap<>();
    private final List<Integer> arrivals = new ArrayList<>();
    private final java.util.concurrent.CountDownLatch subscribed = new java.util.concurrent.CountDownLatch(1);
    private volatile boolean running = true;
    private volatile boolean subscribing = true;
    private volatile boolean dropSubscriber;
    private volatile int duplicates;
    private volatile int duplicatesWithoutDup;
    private volatile long longestPauseMillis;
    /** When the longest pause began, to find it in the brokers' logs. */
    private volatile java.time.Instant longestPauseFrom;
    private Thread publisher;
    private Thread subscriber;

    ContinuousPair(int port, String name, int ratePerSecond) {
        this(List.of(port), List.of(port), name, ratePerSecond);
    }

    /**
     * A pair spread over a cluster: each side connects to the first port of its list and, when
     * its connection fails, to the next one, as a device behind a load balancer would.
     */
    ContinuousPair(List<Integer> publisherPorts, List<Integer> subscriberPorts, String name, int ratePerSecond) {
        this(publisherPorts, subscriberPorts, name, ratePerSecond, 1);
    }

    /**
     * A pair at QoS 0, 1 or 2 end to end (the subscriber answers PUBACK, or PUBREC / PUBCOMP). At
     * QoS 0 "acknowledged" means handed to the client library: nothing promises its delivery.
     */
    ContinuousPair(List<Integer> publisherPorts, List<Integer> subscriberPorts, String name, int ratePerSecond, int qos) {
        this.qos = qos;
        this.publisherPorts = publisherPorts;
        this.subscriberPorts = subscriberPorts;
        this.name = name;
        this.ratePerSecond = ratePerSecond;
    }

    /** The subscriber's session kind (before {@link #start()}). */
    ContinuousPair subscriber(SubscriberKind kind) {
        this.kind = kind;
        return this;
    }

    ContinuousPair start() throws Exception {
        if (!kind.clean) {
            try (RawClient first = new RawClient(subscriberPorts.get(0), MqttVersion.MQTT_3_1_1)) {
                first.connect(name + "-sub", kind.user, false, 0);
                first.subscribe("pairs/" + name + "/+", qos);
            }
        }
        subscriber = new Thread(this::subscribe, name + "-subscriber");
        publisher = new Thread(this::publish, name + "-publisher");
        subscriber.start();
        if (kind.clean && !subscribed.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + ": the subscriber did not subscribe");
        }
        if (kind.clean) {
            // The other nodes learn of the subscription through tbmq.client.session.
            Thread.sleep(2_000);
        }
        publisher.start();
        return this;
    }

    private void publish() {
        Mqtt5BlockingClient client = null;
        int seq = 0;
        long period = 1000 / ratePerSecond;
        while (running) {
            try {
                if (client == null) {
                    client = MqttClient.builder().useMqttVersion5().identifier(name + "-pub").serverHost("127.0.0.1")
                            .serverPort(publisherPorts.get(publisherNode % publisherPorts.size())).buildBlocking();
                    client.connectWith().simpleAuth().username("alice").password(ItStack.PASSWORD.getBytes(StandardCharsets.UTF_8))
                            .applySimpleAuth().send();
                }
                client.publishWith().topic("pairs/" + name + "/x").qos(MqttQos.fromCode(qos))
                        .payload(Integer.toString(seq).getBytes(StandardCharsets.UTF_8)).send();
                synchronized (acked) {
                    acked.set(seq);
                    ackedAt.put(seq, System.currentTimeMillis());
                }
                seq++;
                Thread.sleep(period);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // not acknowledged: a new sequence number next time, this one counts as never published
                seq++;
                client = disconnectQuietly(client);
                publisherNode++;
                sleep(300);
            }
        }
        disconnectQuietly(client);
    }

    private void subscribe() {
        RawClient client = null;
        long last = 0;
        while (subscribing) {
            try {
                if (client == null) {
                    client = new RawClient(subscriberPorts.get(subscriberNode % subscriberPorts.size()), MqttVersion.MQTT_3_1_1);
                    client.connect(name + "-sub", kind.user, kind.clean, 0);
                    if (kind.clean) {
                        client.subscribe("pairs/" + name + "/+", qos);
                        subscribed.countDown();
                    }
                }
                if (dropSubscriber) {
                    dropSubscriber = false;
                    client.close();
                    client = null;
                    continue;
                }
                RawClient.Received r = client.nextPublish(300);
                if (r == null) {
                    continue;
                }
                int seq = Integer.parseInt(r.payload());
                long now = System.currentTimeMillis();
                if (last != 0 && now - last > longestPauseMillis) {
                    longestPauseMillis = now - last;
                    longestPauseFrom = java.time.Instant.ofEpochMilli(last);
                }
                last = now;
                synchronized (received) {
                    if (received.get(seq)) {
                        duplicates++;
                        if (!r.dup()) {
                            duplicatesWithoutDup++;
                        }
                    } else {
                        received.set(seq);
                        arrivals.add(seq);
                    }
                }
                if (r.qos() > 0) {
                    client.ack(r.qos() == 2 ? MqttMessageType.PUBREC : MqttMessageType.PUBACK, r.packetId());
                }
            } catch (Exception e) {
                System.out.println(name + " subscriber reconnects after: " + e.getMessage());
                if (client != null) {
                    client.close();
                    client = null;
                }
                subscriberNode++;
                sleep(300);
            }
        }
        if (client != null) {
            client.close();
        }
    }

    private static Mqtt5BlockingClient disconnectQuietly(Mqtt5BlockingClient c) {
        if (c != null) {
            try {
                c.disconnect();
            } catch (RuntimeException ignored) {
                // already gone
            }
        }
        return null;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    String name() {
        return name;
    }

    int qos() {
        return qos;
    }

    /** The subscriber drops its connection (no DISCONNECT) and reconnects at once, as after a network blip. */
    void reconnectSubscriber() {
        dropSubscriber = true;
    }

    /** The fewest acknowledged messages that show a pair ran through a fault, not around it. */
    static final int MIN_ACKED = 101;

    /**
     * Stops publishing, waits until every acknowledged message arrived (or the timeout), stops.
     * A pair below {@link #MIN_ACKED} publishes on for up to a minute first: on a machine busy with
     * other work the fixed phases of a test may have been too short, not the broker too slow.
     */
    Result finish(long timeoutMillis) throws InterruptedException {
        long more = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < more && publisher.isAlive() && ackedCount() < MIN_ACKED) {
            Thread.sleep(200);
        }
        publisher.interrupt();
        running = false;
        publisher.join(10_000);
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline && lost() > 0) {
            Thread.sleep(200);
        }
        subscribing = false;
        subscriber.join(15_000);
        System.out.printf("%s: longest pause %d ms from %s%n", name, longestPauseMillis, longestPauseFrom);
        if (lost() > 0) {
            System.out.printf("%s: lost %s%n", name, lostRanges());
        }
        return new Result(acked.cardinality(), lost(), duplicates, duplicatesWithoutDup, reordered(), longestPauseMillis);
    }

    private int ackedCount() {
        synchronized (acked) {
            return acked.cardinality();
        }
    }

    private int lost() {
        synchronized (received) {
            BitSet missing;
            synchronized (acked) {
                missing = (BitSet) acked.clone();
            }
            missing.andNot(received);
            return missing.cardinality();
        }
    }

    /** The lost sequence numbers as ranges with the time each range's first and last were acknowledged. */
    private String lostRanges() {
        BitSet missing;
        synchronized (received) {
            synchronized (acked) {
                missing = (BitSet) acked.clone();
            }
            missing.andNot(received);
        }
        StringBuilder out = new StringBuilder();
        for (int from = missing.nextSetBit(0); from >= 0; ) {
            int to = missing.nextClearBit(from) - 1;
            synchronized (acked) {
                out.append(String.format("%d-%d (acknowledged %s to %s) ", from, to,
                        java.time.Instant.ofEpochMilli(ackedAt.get(from)), java.time.Instant.ofEpochMilli(ackedAt.get(to))));
            }
            from = missing.nextSetBit(to + 1);
        }
        return out.toString().trim();
    }

    private int reordered() {
        synchronized (received) {
            int count = 0;
            int highest = -1;
            for (int seq : arrivals) {
                if (seq < highest) {
                    count++;
                }
                highest = Math.max(highest, seq);
            }
            return count;
        }
    }

    record Result(int acked, int lost, int duplicates, int duplicatesWithoutDup, int reordered, long longestPauseMillis) {
    }

    static void awaitSeconds(long s) throws InterruptedException {
        TimeUnit.SECONDS.sleep(s);
    }
}
