package io.tbmq.broker.kafka;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/** The node's one Kafka producer, shared by every topic it writes; each send is a future. */
public final class KafkaSender implements AutoCloseable {
    private final Producer<byte[], byte[]> producer;

    public KafkaSender(KafkaClients clients) {
        this(new KafkaProducer<>(clients.producer()));
    }

    KafkaSender(Producer<byte[], byte[]> producer) {
        this.producer = producer;
    }

    public CompletableFuture<Void> send(String topic, byte[] key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            producer.send(new ProducerRecord<>(topic, key, value), (metadata, error) -> {
                if (error != null) {
                    done.completeExceptionally(error);
                } else {
                    done.complete(null);
                }
            });
        } catch (RuntimeException e) {
            // Thrown for a few refusals (a closed producer, say); most come through the callback.
            done.completeExceptionally(e);
        }
        return done;
    }

    /** What became of one record: its partition and offset once acknowledged, or the error. */
    public interface Acknowledged {
        void acknowledged(int partition, long offset, Exception error);
    }

    /**
     * Sends to {@code partition} (or, when negative, where Kafka's partitioner puts {@code key});
     * false if the producer refused the record at once (no metadata within max.block.ms, say) or it
     * failed before this returned, {@code acknowledged} having heard why.
     */
    public boolean send(String topic, int partition, byte[] key, byte[] value, Acknowledged acknowledged) {
        Future<RecordMetadata> sent;
        try {
            sent = producer.send(new ProducerRecord<>(topic, partition < 0 ? null : partition, key, value),
                    (metadata, error) -> acknowledged.acknowledged(metadata == null || metadata.offset() < 0 ? partition
                            : metadata.partition(), metadata == null ? -1 : metadata.offset(), error));
        } catch (RuntimeException e) {
            acknowledged.acknowledged(partition, -1, e);
            return false;
        }
        // Kafka reports most refusals (a metadata timeout, a record too large) through the callback, during
        // the call, and returns a future that has already failed.
        if (!sent.isDone()) {
            return true;
        }
        try {
            sent.get();
            return true;
        } catch (ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /** Partitions of {@code topic} as the producer knows them now (it refreshes them every metadata max age). */
    public int partitionCount(String topic) {
        return producer.partitionsFor(topic).size();
    }

    /** Fetches the metadata of topics this node writes, so no later send waits for it. */
    public void warm(String... topics) {
        for (String topic : topics) {
            try {
                producer.partitionsFor(topic);
            } catch (RuntimeException e) {
                // Only a head start: a send finds the metadata itself.
            }
        }
    }

    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }
}
