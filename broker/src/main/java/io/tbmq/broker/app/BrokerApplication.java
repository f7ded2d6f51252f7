package io.tbmq.broker.app;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.TopicConfig;
import org.jboss.logging.Logger;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.tbmq.broker.config.BrokerConfig;
import io.tbmq.broker.kafka.ApplicationTopics;
import io.tbmq.broker.kafka.KafkaBackbone;
import io.tbmq.broker.kafka.KafkaClients;
import io.tbmq.broker.kafka.KafkaMessageLog;
import io.tbmq.broker.kafka.KafkaPersistentDestinations;
import io.tbmq.broker.kafka.KafkaSender;
import io.tbmq.broker.kafka.KafkaTopics;
import io.tbmq.broker.kafka.LogConsumer;
import io.tbmq.broker.kafka.SessionStateLog;
import io.tbmq.broker.message.PublishMessage;
import io.tbmq.broker.message.PublishMessageCodec;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.persistence.ApplicationSessions;
import io.tbmq.broker.persistence.PersistedPipeline;
import io.tbmq.broker.persistence.SessionStores;
import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.persistence.redis.RedisConnector;
import io.tbmq.broker.persistence.redis.RedisKeys;
import io.tbmq.broker.session.SessionState;
import io.tbmq.broker.transport.MqttServer;

/**
 * The running broker node. Start: topics provisioned, persistent sessions read back from
 * tbmq.client.session, consumers started, and only then the MQTT listeners bound (a client must
 * find its session). Stop, in the order that loses nothing: stop accepting, let Kafka acknowledge
 * what is in flight (those PUBACKs still go out), DISCONNECT 0x8B to clients, commit, close.
 */
@ApplicationScoped
public class BrokerApplication {
    private static final Logger LOG = Logger.getLogger(BrokerApplication.class);

    @Inject
    BrokerConfig config;

    @Inject
    MeterRegistry registry;

    private BrokerCore core;
    private KafkaSender sender;
    private KafkaBackbone kafka;
    private RedisConnector redis;
    private ApplicationSessions applications;
    private MqttServer server;
    private volatile boolean started;
    private volatile boolean draining;
    private volatile String startupStep = "starting";

    void onStart(@Observes StartupEvent event) {
        if (config.persistence().deviceMessagesLimit() > 0xFFFF) {
            throw new IllegalArgumentException("tbmq.persistence.device-messages-limit can't be greater than 65535 (got "
                    + config.persistence().deviceMessagesLimit() + ")");
        }
        KafkaTopics topics = new KafkaTopics(config.kafka().topicPrefix().orElse(""));
        KafkaClients clients = new KafkaClients(config.kafka(), config.nodeId());
        BrokerMetrics metrics = new BrokerMetrics(registry);
        sender = new KafkaSender(clients);
        kafka = new KafkaBackbone(config.kafka(), clients);
        KafkaMessageLog messageLog = new KafkaMessageLog(sender, topics, metrics);
        ApplicationTopics appTopics = new ApplicationTopics(config.kafka().topicPrefix().orElse(""), kafka.admin(),
                config.kafka().replicationFactor(), config.persistence().applicationTopicRetention());
        applications = new ApplicationSessions(clients, appTopics, config.mqtt().maxQueuedMessages());
        redis = new RedisConnector(config.redis());
        DeviceMessageStore devices = new DeviceMessageStore(redis, new RedisKeys(config.redis().slotGroups()),
                config.persistence().deviceMessagesLimit());
        SessionStores stores = new SessionStores(devices, applications,
                () -> config.persistence().refusePublishesWhileStoreDown() && !redis.reachable());
        core = new BrokerCore(config.mqtt(), config.security(), metrics, stores, route -> messageLog);
        core.router().destinations(new KafkaPersistentDestinations(sender, topics, appTopics));
        SessionStateLog stateLog = new SessionStateLog(sender, clients, topics);
        core.sessions().journal(stateLog);
        PersistedPipeline pipeline = new PersistedPipeline(devices, core.sessions(), metrics,
                config.persistence().deviceMessageTtl().toSeconds());
        server = new MqttServer(config.listeners(), core.services());

        Thread startup = new Thread(() -> {
            try {
                startupStep = "provisioning Kafka topics";
                kafka.provision(List.of(
                        new KafkaBackbone.TopicSpec(topics.msgAll(), config.kafka().msgAllPartitions(), Map.of()),
                        new KafkaBackbone.TopicSpec(topics.msgPersisted(), config.persistence().persistedPartitions(), Map.of()),
                        new KafkaBackbone.TopicSpec(topics.clientSessions(), 1,
                                Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))));
                startupStep = "restoring persistent sessions";
                long now = System.currentTimeMillis();
                List<SessionState> states = stateLog.readAll(Duration.ofMinutes(5));
                states.forEach(s -> core.sessions().restore(s, now));
                LOG.infof("restored %d persistent sessions", states.size());
                startupStep = "starting consumers";
                kafka.consume("msg-all", clients, topics.msgAllGroup(), topics.msgAll(), config.kafka().msgAllConsumers(),
                        this::route, Duration.ofSeconds(30));
                kafka.consume("persisted", clients, topics.msgPersistedGroup(), topics.msgPersisted(),
                        config.persistence().persistedConsumers(), pipeline, Duration.ofSeconds(30));
                startupStep = "binding listeners";
                server.start();
                started = true;
                LOG.infof("node %s started; Kafka %s, Redis %s %s", config.nodeId(), config.kafka().bootstrapServers(),
                        config.redis().mode(), config.redis().nodes());
            } catch (RuntimeException e) {
                LOG.errorf(e, "node %s failed to start while %s", config.nodeId(), startupStep);
                Quarkus.asyncExit(1);
            }
        }, "tbmq-startup");
        startup.setDaemon(true);
        startup.start();
    }

    /** The routing consumer's batch: every message matched; done when every persistent copy is in Kafka. */
    private CompletableFuture<Void> route(org.apache.kafka.clients.consumer.ConsumerRecords<byte[], byte[]> records) {
        List<CompletableFuture<Void>> pending = null;
        for (ConsumerRecord<byte[], byte[]> record : records) {
            PublishMessage message;
            try {
                message = PublishMessageCodec.decode(record.value());
            } catch (IllegalArgumentException e) {
                LOG.debugf("skipping undecodable record %s-%d@%d", record.topic(), record.partition(), record.offset());
                continue;
            }
            CompletableFuture<Void> persisted = core.router().route(message, record.partition(), record.offset());
            if (!persisted.isDone()) {
                if (pending == null) {
                    pending = new ArrayList<>();
                }
                pending.add(persisted);
            }
        }
        return pending == null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    void onStop(@Observes ShutdownEvent event) {
        draining = true;
        Duration grace = config.shutdown().grace();
        LOG.infof("node %s draining (grace %s)", config.nodeId(), grace);
        if (server != null && started) {
            server.stopAccepting();
        }
        if (sender != null) {
            sender.flush();
        }
        if (server != null && started) {
            server.disconnectAll(0x8B, "server shutting down");
            server.awaitClosed(grace);
            server.stop();
        }
        if (kafka != null) {
            kafka.close();
        }
        if (applications != null) {
            applications.close();
        }
        if (core != null) {
            core.close();
        }
        if (sender != null) {
            sender.close();
        }
        if (redis != null) {
            redis.close();
        }
        LOG.infof("node %s stopped", config.nodeId());
    }

    /** Ready for traffic: started, listeners bound, Kafka and Redis reachable, not draining. */
    public boolean ready() {
        return started && !draining && server.isListening() && kafka.ready() && redis.reachable();
    }

    public boolean live() {
        return !draining || server == null || server.isListening();
    }

    public String status() {
        if (draining) {
            return "draining";
        }
        if (!started) {
            return startupStep + "; kafka " + (kafka == null ? "not started" : kafka.status());
        }
        return "mqtt " + (server.isListening() ? "listening" : "not listening") + ", kafka " + kafka.status() + ", redis "
                + redis.status();
    }

    public MqttServer server() {
        return server;
    }
}
