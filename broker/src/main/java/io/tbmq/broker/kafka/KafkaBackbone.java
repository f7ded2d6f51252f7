package io.tbmq.broker.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.jboss.logging.Logger;

import io.tbmq.broker.config.KafkaConfig;
import io.tbmq.broker.message.PublishMessage;

/**
 * The node's side of Kafka other than producing: provisions the topics, runs the consumers that
 * route {@code tbmq.msg.all}, and keeps a connectivity probe for readiness. Kafka may be down
 * when the broker starts; provisioning then retries in the background and readiness stays false.
 */
public final class KafkaBackbone implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(KafkaBackbone.class);
    private static final long PROBE_STALE_MS = 6_000;

    private final KafkaConfig config;
    private final KafkaClients clients;
    private final KafkaTopics topics;
    private final Admin admin;
    private final List<LogConsumer> consumers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean topicsReady;
    private volatile long lastProbeOk;
    private volatile String lastProbeError = "not probed yet";
    private volatile boolean running = true;
    private Thread supervisor;

    public KafkaBackbone(KafkaConfig config, KafkaClients clients, KafkaTopics topics) {
        this.config = config;
        this.clients = clients;
        this.topics = topics;
        var props = clients.common("admin");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
        this.admin = Admin.create(props);
    }

    /** Provisions topics (retrying), then starts {@code consumers} threads routing tbmq.msg.all. */
    public void start(Consumer<PublishMessage> router) {
        supervisor = new Thread(() -> run(router), "tbmq-kafka-supervisor");
        supervisor.setDaemon(true);
        supervisor.start();
    }

    private void run(Consumer<PublishMessage> router) {
        long backoff = 500;
        while (running && !topicsReady) {
            try {
                if (config.createTopics()) {
                    new TopicProvisioner(admin).ensure(topics.msgAll(), config.msgAllPartitions(), config.replicationFactor(), Map.of());
                }
                topicsReady = true;
            } catch (Exception e) {
                LOG.warnf("Kafka at %s not usable yet (%s); retrying", config.bootstrapServers(), rootMessage(e));
                sleep(backoff);
                backoff = Math.min(backoff * 2, 5_000);
            }
        }
        for (int i = 0; running && i < config.msgAllConsumers(); i++) {
            LogConsumer consumer = new LogConsumer(clients.consumer(topics.msgAllGroup(), "msg-all-" + i), topics.msgAll(), router);
            Thread t = new Thread(consumer, "tbmq-msg-all-" + i);
            t.setDaemon(true);
            consumers.add(consumer);
            threads.add(t);
            t.start();
        }
        while (running) {
            probe();
            sleep(2_000);
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

    private static String rootMessage(Throwable e) {
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

    /** Topics exist, consumers run, and Kafka answered within the last few seconds. */
    public boolean ready() {
        return topicsReady && System.currentTimeMillis() - lastProbeOk < PROBE_STALE_MS;
    }

    public String status() {
        if (!topicsReady) {
            return "provisioning topics at " + config.bootstrapServers();
        }
        return ready() ? "connected to " + config.bootstrapServers() : "unreachable: " + lastProbeError;
    }

    @Override
    public void close() {
        running = false;
        consumers.forEach(LogConsumer::stop);
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (supervisor != null) {
            supervisor.interrupt();
        }
        admin.close();
    }
}
