package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.cluster.Downlinks;
import io.tbmq.broker.record.DownlinkRecord;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.StoredMessage;
import io.tbmq.broker.routing.Destinations;

/**
 * Routed copies into Kafka: APPLICATION ones to the client's topic, copies for clients of other
 * nodes to those nodes' downlink topics (DEVICE ones are stored in Redis by the router's batch).
 */
public final class KafkaDestinations implements Destinations, Downlinks {
    private final KafkaSender sender;
    private final KafkaTopics topics;
    private final ApplicationTopics applicationTopics;

    public KafkaDestinations(KafkaSender sender, KafkaTopics topics, ApplicationTopics applicationTopics) {
        this.sender = sender;
        this.topics = topics;
        this.applicationTopics = applicationTopics;
    }

    @Override
    public CompletableFuture<Void> application(String clientId, OutboundMessage message) {
        return sender.send(applicationTopics.topic(clientId), message.message().topic().getBytes(StandardCharsets.UTF_8),
                StoredMessage.encode(message));
    }

    @Override
    public CompletableFuture<Void> downlink(String node, String clientId, long epoch, OutboundMessage message) {
        return send(node, clientId, DownlinkRecord.of(epoch, message));
    }

    @Override
    public CompletableFuture<Void> send(String node, String clientId, DownlinkRecord record) {
        String topic = record.stored() ? topics.downlinkPersisted(node) : topics.downlinkBasic(node);
        return sender.send(topic, key(clientId), record.encode());
    }

    private static byte[] key(String clientId) {
        return clientId.getBytes(StandardCharsets.UTF_8);
    }
}
