package io.tbmq.broker.kafka;

import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import io.tbmq.broker.config.KafkaConfig;

/** Client properties for the broker's producers, consumers and admin client, from {@link KafkaConfig}. */
public final class KafkaClients {
    /** What a consumer may take beyond its batch timeout between two polls: giving a batch up, the next poll's handling. */
    private static final long POLL_MARGIN_MILLIS = 10_000;
    private final KafkaConfig config;
    private final String nodeId;

    public KafkaClients(KafkaConfig config, String nodeId) {
        this.config = config;
        this.nodeId = nodeId;
        java.time.Duration batchTimeout = config.consumerBatchTimeout();
        if (batchTimeout.isNegative() || batchTimeout.isZero()) {
            // Every batch would be read again at once, over and over.
            throw new IllegalArgumentException("tbmq.kafka.consumer-batch-timeout must be more than 0, not " + batchTimeout);
        }
        // A consumer waits up to this long for a batch without polling (and a few seconds more to
        // give it up); a member that does not poll for max.poll.interval.ms is expelled from its group.
        // The consumers take it from the properties file unless an inline property overrides it.
        String source = "tbmq.kafka.properties." + ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG;
        Object interval = config.properties().get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG);
        if (interval == null && config.propertiesFile().isPresent()) {
            interval = load(config.propertiesFile().get()).get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG);
            source = ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG + " in tbmq.kafka.properties-file " + config.propertiesFile().get();
        }
        long maxPollInterval;
        try {
            maxPollInterval = interval == null ? 300_000 : Long.parseLong(String.valueOf(interval).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(source + " must be a number of milliseconds, not " + String.valueOf(interval).trim());
        }
        if (batchTimeout.toMillis() > maxPollInterval - POLL_MARGIN_MILLIS) {
            throw new IllegalArgumentException("tbmq.kafka.consumer-batch-timeout must be at most the consumers' "
                    + ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG + " less 10 s (" + (maxPollInterval - POLL_MARGIN_MILLIS)
                    + " ms), not " + batchTimeout);
        }
    }

    public java.time.Duration commitInterval() {
        return config.consumerCommitInterval();
    }

    /** How long a consumer waits for a polled batch before reading it again (see {@link KafkaConfig#consumerBatchTimeout}). */
    public java.time.Duration batchTimeout() {
        return config.consumerBatchTimeout();
    }

    public Properties common(String clientIdSuffix) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, "tbmq-" + nodeId + "-" + clientIdSuffix);
        p.put(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, Long.toString(config.metadataMaxAge().toMillis()));
        config.propertiesFile().ifPresent(file -> p.putAll(load(file)));
        p.putAll(config.properties());
        return p;
    }

    private static Properties load(String file) {
        Properties p = new Properties();
        try (var in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(file))) {
            p.load(in);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("tbmq.kafka.properties-file " + file + " cannot be read: " + e.getMessage(), e);
        }
        return p;
    }

    public Properties producer() {
        Properties p = common("producer");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, config.producerAcks());
        // Idempotence keeps per-partition order across retries, so per-topic MQTT order holds.
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, Long.toString(config.producerLinger().toMillis()));
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(config.producerBatchSize()));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.producerCompression());
        // Kafka requires delivery.timeout >= linger + request.timeout.
        long lingerMs = config.producerLinger().toMillis();
        long deliveryMs = Math.max(config.deliveryTimeout().toMillis(), lingerMs + 1000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(deliveryMs));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(Math.min(deliveryMs - lingerMs, 30_000)));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "2000");
        return p;
    }

    /**
     * The consumer of one APPLICATION client: it returns a fetch as soon as one message is there,
     * since it serves one client (batching would only add latency) and an idle one should cost
     * Kafka little ({@code idleWait} per fetch).
     */
    public Properties clientConsumer(String groupId, String clientIdSuffix, java.time.Duration idleWait) {
        Properties p = consumer(groupId, clientIdSuffix);
        p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Long.toString(idleWait.toMillis()));
        return p;
    }

    /**
     * A consumer of a broker topic that is written only in passing (tbmq.msg.persisted, drained after
     * an upgrade): a fetch returns as soon as anything is there and otherwise waits half a second, so
     * an empty topic costs Kafka two requests a second instead of a hundred.
     */
    public Properties drainConsumer(String groupId, String clientIdSuffix) {
        Properties p = consumer(groupId, clientIdSuffix);
        p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "500");
        return p;
    }

    /** A consumer of the broker's own topics: fetches batched by consumer-fetch-min-bytes and -max-wait. */
    public Properties consumer(String groupId, String clientIdSuffix) {
        Properties p = common(clientIdSuffix);
        p.put(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, Long.toString(config.consumerMetadataMaxAge().toMillis()));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        // Earliest: a partition without a committed offset is one the group has never read (a new
        // cluster, or partitions the operator just added), so everything in it is still to be routed.
        // "latest" would skip what was PUBACKed before the first assignment.
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(config.consumerMaxPollRecords()));
        p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, Integer.toString(config.consumerFetchMinBytes()));
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Long.toString(config.consumerFetchMaxWait().toMillis()));
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        // Static membership: a restarted node (same stable node id) takes its partitions back at once
        // instead of waiting for its dead members to time out; the short session timeout bounds the
        // pause when a node does not come back.
        p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "tbmq-" + nodeId + "-" + clientIdSuffix);
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Long.toString(config.consumerSessionTimeout().toMillis()));
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Long.toString(heartbeatMillis()));
        return p;
    }

    private long heartbeatMillis() {
        long ceiling = Math.max(1, config.consumerSessionTimeout().toMillis() / 3);
        return Math.max(1, Math.min(config.consumerHeartbeatInterval().toMillis(), ceiling));
    }
}
