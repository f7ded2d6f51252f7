package io.tbmq.operator.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The operator's own settings ({@code tbmq.operator.*}, environment TBMQ_OPERATOR_*). */
@ConfigMapping(prefix = "tbmq.operator")
public interface OperatorConfig {

    /**
     * Write objects with server-side apply (default). Off only for API servers that lack it, such as
     * the fast tests' mock server: then objects are replaced whole.
     */
    @WithDefault("true")
    boolean serverSideApply();

    /**
     * How long a Kafka the operator wrote may stay without any status before KafkaReady says that
     * no Strimzi operator watches its namespace (Strimzi's default install watches only its own).
     */
    @WithDefault("3m")
    java.time.Duration strimziStatusTimeout();

    /**
     * The broker image of TbmqClusters that name none. The operator image carries the tbmq-broker
     * image built with it (scripts/images.sh sets TBMQ_OPERATOR_BROKER_IMAGE to the same registry and version).
     */
    @WithDefault("docker.io/tbmq/tbmq-broker:0.1.0")
    String brokerImage();

    /** The Redis image of TbmqClusters that name none; it must run redis-server as uid 999. */
    @WithDefault("redis:7.2")
    String redisImage();
}
