package io.tbmq.broker.subscription;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import io.tbmq.broker.record.SubscriptionOptions;

/**
 * Members of one shared subscription {@code $share/<group>/<filter>}. Each message goes to one
 * member, round-robin, preferring members that are connected; a message for a group with no
 * connected member goes to a persistent one, whose session queues it.
 */
final class SharedGroup {
    private final AtomicInteger next = new AtomicInteger();
    /** Copy-on-write, replaced under the trie's write lock. */
    volatile List<Map.Entry<String, SubscriptionOptions>> members = List.of();

    Map.Entry<String, SubscriptionOptions> pick(Predicate<String> connected) {
        List<Map.Entry<String, SubscriptionOptions>> snapshot = members;
        int size = snapshot.size();
        if (size == 0) {
            return null;
        }
        int start = Math.floorMod(next.getAndIncrement(), size);
        for (int i = 0; i < size; i++) {
            Map.Entry<String, SubscriptionOptions> candidate = snapshot.get((start + i) % size);
            if (connected.test(candidate.getKey())) {
                // Skip the counter past offline members too, or the member after one would get a double share.
                if (i > 0) {
                    next.addAndGet(i);
                }
                return candidate;
            }
        }
        return snapshot.get(start);
    }
}
