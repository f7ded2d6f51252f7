package io.tbmq.broker.persistence;

import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.tbmq.broker.persistence.redis.DeviceMessageStore;
import io.tbmq.broker.record.OutboundMessage;
import io.tbmq.broker.record.StoredMessage;
import io.tbmq.broker.util.LogText;

/**
 * What a DEVICE client has in Redis, ready for its session: packet ids that only owe a PUBREL,
 * and the messages to send in order, DUP set on those at or below the session's threshold.
 */
public record LoadedMessages(int[] released, List<OutboundMessage> messages, long highestScore, long lastScore) {
    private static final Logger LOG = Logger.getLogger(LoadedMessages.class);

    public static LoadedMessages of(String clientId, DeviceMessageStore.Loaded loaded, long dupThreshold) {
        List<Integer> released = new ArrayList<>();
        List<OutboundMessage> messages = new ArrayList<>(loaded.entries().size());
        long highest = 0;
        for (DeviceMessageStore.Entry e : loaded.entries()) {
            highest = Math.max(highest, e.score());
            if (e.released()) {
                released.add(e.packetId());
                continue;
            }
            try {
                messages.add(StoredMessage.decode(e.value(), e.packetId(), e.score(), e.score() <= dupThreshold));
            } catch (IllegalArgumentException bad) {
                LOG.warnf("unreadable stored message %d of %s skipped", e.packetId(), LogText.of(clientId));
            }
        }
        return new LoadedMessages(released.stream().mapToInt(Integer::intValue).toArray(), messages, highest,
                Math.max(highest, loaded.lastScore()));
    }
}
