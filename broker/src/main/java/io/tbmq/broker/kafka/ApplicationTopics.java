package io.tbmq.broker.kafka;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The Kafka topic of each persistent APPLICATION client, {@code tbmq.msg.app.<id>}: one partition,
 * the client's offline backlog, created on first connect and deleted with the session.
 *
 * <p>Client ids are encoded into legal topic names: letters, digits, {@code .} and {@code -} stay;
 * every other character (including {@code _}, the escape) becomes {@code _} and two hex digits per
 * UTF-8 byte. A name too long for Kafka (249) is cut and suffixed with a SHA-256 prefix of the id.
 */
public final class ApplicationTopics {
    private static final int MAX_TOPIC = 249;

    private final String prefix;
    private final Admin admin;
    private volatile short replicationFactor;
    private final Duration retention;

    /** Replication of client topics created from now on (a live setting). */
    public void replicationFactor(short replicationFactor) {
        this.replicationFactor = replicationFactor;
    }

    public ApplicationTopics(String prefix, Admin admin, short replicationFactor, Duration retention) {
        this.prefix = prefix;
        this.admin = admin;
        this.replicationFactor = replicationFactor;
        this.retention = retention;
    }

    public String topic(String clientId) {
        String base = prefix + "tbmq.msg.app.";
        return base + encode(clientId, MAX_TOPIC - base.length());
    }

    /** Consumer group whose committed offset is what the client acknowledged. */
    public String group(String clientId) {
        return prefix + "tbmq-app-" + encode(clientId, 200);
    }

    static String encode(String clientId, int maxLength) {
        StringBuilder out = new StringBuilder();
        for (byte b : clientId.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xFF);
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
            if (plain) {
                out.append(c);
            } else {
                out.append('_').append(String.format("%02x", b & 0xFF));
            }
        }
        if (out.length() <= maxLength && out.length() > 0) {
            return out.toString();
        }
        try {
            String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(clientId.getBytes(StandardCharsets.UTF_8))).substring(0, 16);
            return out.substring(0, Math.min(out.length(), maxLength - 18)) + "_h" + hash;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Creates the client's topic unless it exists. */
    public CompletableFuture<Void> ensure(String clientId) {
        NewTopic topic = new NewTopic(topic(clientId), 1, replicationFactor)
                .configs(Map.of(TopicConfig.RETENTION_MS_CONFIG, Long.toString(retention.toMillis()),
                        TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE));
        CompletableFuture<Void> done = new CompletableFuture<>();
        admin.createTopics(List.of(topic)).all().whenComplete((v, e) -> {
            if (e == null || e instanceof TopicExistsException || e.getCause() instanceof TopicExistsException) {
                done.complete(null);
            } else {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    /** Deletes the client's topic and its consumer group: the session ended. */
    public CompletableFuture<Void> delete(String clientId) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        admin.deleteTopics(List.of(topic(clientId))).all().whenComplete((v, e) -> {
            admin.deleteConsumerGroups(List.of(group(clientId))).all().whenComplete((v2, e2) -> {
                Throwable error = e != null && !(e instanceof UnknownTopicOrPartitionException
                        || e.getCause() instanceof UnknownTopicOrPartitionException) ? e : null;
                if (error == null && e2 != null && !(e2 instanceof GroupIdNotFoundException
                        || e2.getCause() instanceof GroupIdNotFoundException)) {
                    error = e2;
                }
                if (error == null) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(error);
                }
            });
        });
        return done;
    }
}
