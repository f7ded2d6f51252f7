package io.tbmq.broker.kafka;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What a consumer has processed and Kafka has not yet confirmed as committed, per partition. An
 * offset leaves only when a commit covering it succeeded, or when its partition is no longer this
 * consumer's: a commit that fails (a rebalance in progress, a coordinator moving) is retried by the
 * next one instead of being forgotten, which would make the partition's next owner replay what was
 * already delivered. Consumer thread only (commit callbacks run on it too).
 */
final class UncommittedOffsets {
    private final Map<TopicPartition, Long> next = new HashMap<>();

    /** Everything before {@code nextOffset} of {@code partition} is processed. */
    void processed(TopicPartition partition, long nextOffset) {
        next.merge(partition, nextOffset, Math::max);
    }

    boolean isEmpty() {
        return next.isEmpty();
    }

    /** The offsets a commit should carry now. */
    Map<TopicPartition, OffsetAndMetadata> toCommit() {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>(next.size() * 2);
        next.forEach((tp, offset) -> out.put(tp, new OffsetAndMetadata(offset)));
        return out;
    }

    /** The offsets a commit should carry for {@code partitions} only. */
    Map<TopicPartition, OffsetAndMetadata> toCommit(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        for (TopicPartition tp : partitions) {
            Long offset = next.get(tp);
            if (offset != null) {
                out.put(tp, new OffsetAndMetadata(offset));
            }
        }
        return out;
    }

    /** A commit of {@code offsets} succeeded: what it covers is done; newer progress stays. */
    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.forEach((tp, committed) -> next.computeIfPresent(tp, (k, offset) -> offset <= committed.offset() ? null : offset));
    }

    /** The partitions went to another consumer: their offsets are not this consumer's to commit. */
    void forget(Collection<TopicPartition> partitions) {
        partitions.forEach(next::remove);
    }
}
