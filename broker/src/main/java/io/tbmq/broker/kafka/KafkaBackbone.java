package io.tbmq.broker.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.jboss.logging.Logger;

import io.tbmq.broker.config.KafkaConfig;
import io.tbmq.broker.log.BatchHandler;

/**
 * The node's side of Kafka other than producing: topic provisioning, the consumer threads, and a
 * connectivity probe for readiness. Kafka may be down when the broker starts: provisioning then
 * retries until it answers.
 */
public final class KafkaBackbone implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(KafkaBackbone.class);
    private static final long PROBE_STALE_MS = 6_000;

    /** A topic the broker needs. */
    public record TopicSpec(String name, int partitions, Map<String, String> configs) {
    }

    private final KafkaConfig config;
    private final Admin admin;
    private final List<LogConsumer> consumers = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean topicsReady;
    private volatile short replicationFactor;
    private volatile long lastProbeOk;
    private volatile String lastProbeError = "not probed yet";
    private volatile String lastProvisionError;
    private volatile boolean running = true;
    private final Thread prober;

    public KafkaBackbone(KafkaConfig config, KafkaClients clients) {
        this.config = config;
        this.replicationFactor = config.replicationFactor();
        var props = clients.common("admin");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
        this.admin = Admin.create(props);
        this.prober = new Thread(() -> {
            while (running) {
                probe();
                sleep(2_000);
            }
        }, "tbmq-kafka-probe");
        prober.setDaemon(true);
        prober.start();
    }

    public Admin admin() {
        return admin;
    }

    /** Creates the topics (or raises their partitions), retrying until Kafka answers; blocks. */
    public void provision(List<TopicSpec> topics) {
        ensure(topics);
        topicsReady = running;
    }

    /** Creates topics needed before the others ({@link #provision}), without counting Kafka's topics as in place yet. */
    public void provisionFirst(List<TopicSpec> topics) {
        ensure(topics);
    }

    private void ensure(List<TopicSpec> topics) {
        long backoff = 500;
        while (running) {
            try {
                if (config.createTopics()) {
                    TopicProvisioner provisioner = new TopicProvisioner(admin);
                    for (TopicSpec t : topics) {
                        provisioner.ensure(t.name(), t.partitions(), replicationFactor, t.configs());
                    }
                }
                return;
            } catch (Exception e) {
                lastProvisionError = rootMessage(e);
                LOG.warnf("Kafka at %s not usable yet (%s); retrying", config.bootstrapServers(), lastProvisionError);
                sleep(backoff);
                backoff = Math.min(backoff * 2, 5_000);
            }
        }
    }

    /** Replication of topics this node creates from now on (a live setting). */
    public void replicationFactor(short replicationFactor) {
        this.replicationFactor = replicationFactor;
    }

    /**
     * Raises {@code topic} to {@code partitions} now (a live setting), where this broker manages its
     * topics (tbmq.kafka.create-topics); the producer and consumers use new partitions once their
     * metadata is refreshed (tbmq.kafka.metadata-max-age).
     */
    public void raisePartitions(String topic, int partitions) {
        if (!config.createTopics()) {
            return;
        }
        try {
            new TopicProvisioner(admin).ensure(topic, partitions, replicationFactor, Map.of());
        } catch (Exception e) {
            throw new IllegalStateException("raising " + topic + " to " + partitions + " partitions failed: " + rootMessage(e), e);
        }
    }

    /** Records the node's consumers of {@code topic} are behind its end (0 for a topic it does not consume). */
    public long lag(String topic) {
        long sum = 0;
        for (LogConsumer c : consumers) {
            if (c.topic().equals(topic)) {
                sum += c.lag();
            }
        }
        return sum;
    }

    /** The longest any of the node's consumers of {@code topic} has waited without a batch finishing, in seconds. */
    public double stalledSeconds(String topic) {
        double longest = 0;
        for (LogConsumer c : consumers) {
            if (c.topic().equals(topic)) {
                longest = Math.max(longest, c.stalledSeconds());
            }
        }
        return longest;
    }

    /** Starts {@code count} threads consuming {@code topic} in group {@code group}. */
    public void consume(String name, KafkaClients clients, String group, String topic, int count, BatchHandler handler,
            Duration handlerTimeout) {
        consume(name, clients, group, topic, count, handler, handlerTimeout, 0);
    }

    /**
     * The same, each thread polling on while its earlier batches are unfinished, up to
     * {@code readAhead} records past the oldest ({@link LogConsumer}); the handler keeps order itself.
     */
    public void consume(String name, KafkaClients clients, String group, String topic, int count, BatchHandler handler,
            Duration handlerTimeout, int readAhead) {
        consume(name, clients, topic, count, handler, handlerTimeout, readAhead, LogConsumer.Rest.NEVER,
                i -> clients.consumer(group, name + "-" + i));
    }

    /** The same, each thread stopping its fetches while {@code rest} allows ({@link LogConsumer.Rest}). */
    public void consume(String name, KafkaClients clients, String group, String topic, int count, BatchHandler handler,
            Duration handlerTimeout, LogConsumer.Rest rest) {
        consume(name, clients, topic, count, handler, handlerTimeout, 0, rest, i -> clients.consumer(group, name + "-" + i));
    }

    /**
     * The same for a topic that is empty but for a while after an upgrade: its fetches wait long when
     * there is nothing to read and return at once when there is ({@link KafkaClients#drainConsumer}).
     */
    public void drain(String name, KafkaClients clients, String group, String topic, int count, BatchHandler handler,
            Duration handlerTimeout) {
        consume(name, clients, topic, count, handler, handlerTimeout, 0, LogConsumer.Rest.NEVER,
                i -> clients.drainConsumer(group, name + "-" + i));
    }

    private void consume(String name, KafkaClients clients, String topic, int count, BatchHandler handler, Duration handlerTimeout,
            int readAhead, LogConsumer.Rest rest, java.util.function.IntFunction<java.util.Properties> properties) {
        for (int i = 0; i < count; i++) {
            LogConsumer consumer = new LogConsumer(properties.apply(i), topic, handler, handlerTimeout, clients.commitInterval(),
                    readAhead, rest);
            Thread t = new Thread(consumer, "tbmq-" + name + "-" + i);
            t.setDaemon(true);
            consumers.add(consumer);
            threads.add(t);
            t.start();
        }
    }

    private void probe() {
        try {
            admin.describeCluster().nodes().get(3, TimeUnit.SECONDS);
            lastProbeOk = System.currentTimeMillis();
        } catch (Exception e) {
            lastProbeError = rootMessage(e);
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A consumer that stopped without being asked to, as "topic: cause", or null while all run. */
    public String failedConsumer() {
        for (LogConsumer consumer : consumers) {
            RuntimeException failure = consumer.failure();
            if (failure != null) {
                return consumer.topic() + ": " + rootMessage(failure);
            }
        }
        return null;
    }

    /** Topics exist and Kafka answered within the last few seconds. */
    public boolean ready() {
        return topicsReady && System.currentTimeMillis() - lastProbeOk < PROBE_STALE_MS;
    }

    public String status() {
        if (!topicsReady) {
            // The cause, for whoever reads readiness (the operator puts it in the TbmqCluster's status).
            return "provisioning topics at " + config.bootstrapServers() + (lastProvisionError == null ? ""
                    : ": " + lastProvisionError);
        }
        return ready() ? "connected to " + config.bootstrapServers() : "unreachable: " + lastProbeError;
    }

    /** Stops the consumers; their last processed offsets are committed. */
    public void stopConsumers() {
        consumers.forEach(LogConsumer::stop);
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        running = false;
        stopConsumers();
        prober.interrupt();
        admin.close();
    }
}
