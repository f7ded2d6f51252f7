package io.tbmq.broker.app;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.tbmq.broker.config.BrokerConfig;
import io.tbmq.broker.kafka.KafkaBackbone;
import io.tbmq.broker.kafka.KafkaClients;
import io.tbmq.broker.kafka.KafkaMessageLog;
import io.tbmq.broker.kafka.KafkaTopics;
import io.tbmq.broker.metrics.BrokerMetrics;
import io.tbmq.broker.transport.MqttServer;

/**
 * The running broker node: wires {@link BrokerCore} to Kafka and the MQTT listeners at start, and
 * shuts down in the order that loses nothing: stop accepting, let Kafka acknowledge what is in
 * flight (so those PUBACKs still go out), DISCONNECT 0x8B to clients, close.
 */
@ApplicationScoped
public class BrokerApplication {
    private static final Logger LOG = Logger.getLogger(BrokerApplication.class);

    @Inject
    BrokerConfig config;

    @Inject
    MeterRegistry registry;

    private BrokerCore core;
    private KafkaMessageLog messageLog;
    private KafkaBackbone kafka;
    private MqttServer server;
    private volatile boolean draining;

    void onStart(@Observes StartupEvent event) {
        KafkaTopics topics = new KafkaTopics(config.kafka().topicPrefix().orElse(""));
        KafkaClients clients = new KafkaClients(config.kafka(), config.nodeId());
        BrokerMetrics metrics = new BrokerMetrics(registry);
        messageLog = new KafkaMessageLog(clients, topics, metrics);
        core = new BrokerCore(config.mqtt(), config.security(), metrics, route -> messageLog);
        kafka = new KafkaBackbone(config.kafka(), clients, topics);
        kafka.start(core.router()::route);
        server = new MqttServer(config.listeners(), core.services());
        server.start();
        LOG.infof("node %s started; Kafka %s", config.nodeId(), config.kafka().bootstrapServers());
    }

    void onStop(@Observes ShutdownEvent event) {
        draining = true;
        Duration grace = config.shutdown().grace();
        LOG.infof("node %s draining (grace %s)", config.nodeId(), grace);
        if (server != null) {
            server.stopAccepting();
        }
        if (messageLog != null) {
            messageLog.flush();
        }
        if (server != null) {
            server.disconnectAll(0x8B, "server shutting down");
            server.awaitClosed(grace);
            server.stop();
        }
        if (kafka != null) {
            kafka.close();
        }
        if (core != null) {
            core.close();
        }
        LOG.infof("node %s stopped", config.nodeId());
    }

    /** Ready for traffic: listeners bound, Kafka reachable with topics in place, not draining. */
    public boolean ready() {
        return !draining && server != null && server.isListening() && kafka != null && kafka.ready();
    }

    public String status() {
        if (draining) {
            return "draining";
        }
        return "mqtt " + (server != null && server.isListening() ? "listening" : "not listening") + ", kafka "
                + (kafka == null ? "not started" : kafka.status());
    }

    public MqttServer server() {
        return server;
    }
}
