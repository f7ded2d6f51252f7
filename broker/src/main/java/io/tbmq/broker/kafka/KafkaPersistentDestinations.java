package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.persistence.PersistedRecord;
import io.tbmq.broker.persistence.StoredMessage;
import io.tbmq.broker.routing.PersistentDestinations;
import io.tbmq.broker.session.OutboundMessage;
import io.tbmq.broker.session.Session;

/** Persistent copies into Kafka: DEVICE ones to tbmq.msg.persisted, APPLICATION ones to the client's topic. */
public final class KafkaPersistentDestinations implements PersistentDestinations {
    private final KafkaSender sender;
    private final KafkaTopics topics;
    private final ApplicationTopics applicationTopics;

    public KafkaPersistentDestinations(KafkaSender sender, KafkaTopics topics, ApplicationTopics applicationTopics) {
        this.sender = sender;
        this.topics = topics;
        this.applicationTopics = applicationTopics;
    }

    @Override
    public CompletableFuture<Void> device(Session session, OutboundMessage message, int sourcePartition, long sourceOffset) {
        PersistedRecord record = new PersistedRecord(session.epoch(), sourcePartition, sourceOffset,
                message.message().expiresAtMillis(), StoredMessage.encode(message));
        return sender.send(topics.msgPersisted(), session.clientId().getBytes(StandardCharsets.UTF_8), record.encode());
    }

    @Override
    public CompletableFuture<Void> application(Session session, OutboundMessage message) {
        return sender.send(applicationTopics.topic(session.clientId()), message.message().topic().getBytes(StandardCharsets.UTF_8),
                StoredMessage.encode(message));
    }
}
